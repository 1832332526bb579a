//! One question, answered: the checks before anything is sent (length, the member's rate,
//! whether an owner turned the assistant on), the tool loop within its limits, and what is
//! kept afterwards (the turn, its cards, its usage). Reads run freely; every write becomes a
//! proposal: `dry_run` and any confirmation are taken out of the model's arguments, the
//! catalog previews the call (the assistant's writes always wait for the person) and stores
//! it, and the person gets a card Exhale wrote. Also what the person does with a card.

use std::time::{Duration, Instant};

use ops::limits::assistant as limits;
use ops::{
    BoxFuture, Caller, Mode, Op as _, OpError, OpMeta, Text,
    activity::{Undo, UndoInput},
    assistant::{
        Answer, Ask, Card, Conversation, Document, DocumentReading, ProposalAction, ProposalStatus,
        ProviderSettings, Said, Screen, Turn, Usage, UsagePurpose,
    },
    common::RecordId,
    household::Empty,
    ledger::CreateTransaction,
    registry::{ListActivity, ListActivityInput},
    reports::GetContext,
};
use serde_json::{Value, json};
use tracing::Instrument;

use crate::{
    Assistant, cards, choose,
    llm::{Event, Message, Part, Request, Role, StopReason, cost},
    prompt, repair, screens, tools,
};

/// Adds to `definitions` the tools a `find_tools` result names that the assistant may call and
/// that are not offered yet.
fn offer_found(
    ops: &[OpMeta],
    assistant: &Caller,
    result: &Part,
    definitions: &mut Vec<crate::llm::ToolDef>,
) {
    let Part::ToolResult { content, is_error: false, .. } = result else {
        return;
    };
    let Ok(found) = serde_json::from_str::<ops::tools::FoundTools>(content) else {
        return;
    };
    for tool in found.tools {
        let Some(meta) = tools::callable(ops, assistant, &tool.name) else {
            continue;
        };
        if !definitions.iter().any(|offered| offered.name == tool.name) {
            definitions.push(tools::definition(meta));
        }
    }
}

/// Keys a model may add to a write's arguments to skip the person; always taken out.
const SKIPPING_KEYS: &[&str] = &["dry_run", "dryRun", "confirm", "confirmed", "confirmation_id"];

/// Tool calls one model call may make; more are answered with an error.
const CALLS_PER_ROUND: usize = 8;

fn off() -> OpError {
    OpError::conflict(Text::new(
        "The assistant is off. An owner turns it on in Settings, under Built-in assistant, by choosing a provider and a model.",
    ))
}

/// A tool result for the model, as one block.
fn tool_result(id: &str, content: String, is_error: bool) -> Part {
    Part::ToolResult { id: id.to_owned(), content, is_error }
}

/// A refusal as the model reads it: the stable code, then what to do.
fn refused(err: &OpError) -> String {
    match err {
        OpError::InvalidInput { pointer, message } => {
            format!("{}: {} (at {pointer})", err.code(), message.render())
        }
        _ => format!("{}: {}", err.code(), err.text().render()),
    }
}

/// An op's output as the model reads it, at most `limits::TOOL_RESULT_BYTES`.
fn fitted(mut output: Value) -> String {
    prompt::strip_emails(&mut output);
    let text = output.to_string();
    if text.len() <= limits::TOOL_RESULT_BYTES {
        return text;
    }
    let note = "\n[cut at 30,000 bytes: narrow the query with a filter or a smaller limit, or follow next_cursor]";
    let mut end = limits::TOOL_RESULT_BYTES - note.len();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{note}", &text[..end])
}

/// What the tools of one answer made for the person.
struct Made<'a> {
    cards: &'a mut Vec<Card>,
    screens: &'a mut Vec<Screen>,
    /// What a name the model passed matched, when it matched several: the person is asked
    /// which they mean, and the model does not guess.
    several: &'a mut Option<String>,
    /// The language the person reads their cards in (the model reads English).
    reader: ops::Language,
}

/// What the calls of one question used, summed.
#[derive(Default)]
pub(crate) struct Spent {
    pub(crate) calls: u32,
    pub(crate) input: u64,
    pub(crate) output: u64,
    /// `None` once a call had no price.
    cost: Option<u64>,
    priced: bool,
}

impl Spent {
    pub(crate) fn add(&mut self, usage: Option<&crate::llm::Usage>, settings: &ProviderSettings) {
        self.calls += 1;
        let price = settings.prices.iter().find(|price| price.model == settings.model);
        let cost = usage.and_then(|usage| cost::estimate(usage, price));
        if let Some(usage) = usage {
            self.input += usage.input + usage.cache_read + usage.cache_write;
            self.output += usage.output;
        }
        self.cost = match (self.calls, self.cost, cost) {
            (1, _, cost) => cost,
            (_, Some(sum), Some(cost)) => Some(sum.saturating_add(cost)),
            _ => None,
        };
        self.priced = self.cost.is_some();
    }

    /// What the calls cost, when every one had a price.
    pub(crate) fn cost(&self) -> Option<u64> {
        if self.priced { self.cost } else { None }
    }
}

impl Assistant {
    /// Counts one message of the member, or refuses it with when to try again.
    pub(crate) async fn take_message(&self, caller: &Caller) -> Result<(), OpError> {
        self.store.take_message(caller).await?.map_err(|wait| OpError::RateLimited {
            retry_after_secs: wait,
            message: Text::new("Too many messages in a row: the assistant takes one every {every} seconds after a burst of {burst}. Try again in {secs} s.")
                .with("every", limits::REFILL_SECS)
                .with("burst", limits::BURST)
                .with("secs", wait),
        })
    }

    /// Where the household's questions go; refused while the assistant is off.
    pub(crate) async fn settings(&self, caller: &Caller) -> Result<ProviderSettings, OpError> {
        self.store.provider(caller.household_id).await?.ok_or_else(off)
    }

    pub(crate) fn provider_for(
        &self,
        settings: &ProviderSettings,
    ) -> Result<std::sync::Arc<dyn crate::llm::Provider>, OpError> {
        self.connect.connect(settings).map_err(|err| {
            OpError::conflict(
                Text::new("The assistant's provider settings cannot be used ({error}). An owner can fix them in Settings, under Built-in assistant.")
                    .with("error", err),
            )
        })
    }

    async fn answer(
        &self,
        caller: &Caller,
        question: &str,
        said: &mut (dyn FnMut(Said) + Send),
    ) -> Result<Answer, OpError> {
        let question = question.trim();
        if question.is_empty() {
            return Err(OpError::invalid("/message", Text::new("Write a question or a request.")));
        }
        if question.len() > limits::MESSAGE_BYTES {
            return Err(OpError::invalid(
                "/message",
                Text::new("The message is {bytes} bytes; at most {max} are sent to the assistant. Say it in fewer words, or ask in parts.")
                    .with("bytes", question.len())
                    .with("max", limits::MESSAGE_BYTES),
            ));
        }
        self.take_message(caller).await?;
        let settings = self.settings(caller).await?;
        let provider = self.provider_for(&settings)?;
        let conversation = self.store.conversation(caller).await?;
        let assistant = Caller::assistant_for(caller);
        let briefing =
            ops::call::<GetContext>(self.catalog.as_ref(), &assistant, &Empty {}, Mode::Apply)
                .await?;
        let names = choose::Names::read(self.catalog.as_ref(), &assistant, &briefing).await;
        let mut definitions = match self.tool_set {
            Some(set) => {
                let mut fixed = tools::definitions(self.catalog.as_ref(), &assistant, set);
                fixed.push(screens::definition());
                fixed
            }
            None => {
                let before = conversation.turns.last().map(|turn| turn.question.as_str());
                choose::for_question(self.catalog.ops(), &assistant, question, before, &names)
            }
        };
        // A call written as text may name any tool the assistant may call, offered or not.
        let callable: Vec<&str> = self
            .catalog
            .ops()
            .iter()
            .filter(|meta| ops::policy::may_call(&assistant, meta.info))
            .map(OpMeta::name)
            .chain([screens::NAME])
            .collect();

        let mut messages = Vec::new();
        for turn in &conversation.turns {
            messages.push(Message::user_text(turn.question.clone()));
            messages.push(Message {
                role: Role::Assistant,
                parts: vec![Part::Text(turn.answer.clone())],
            });
        }
        let briefing = briefing.markdown.as_str();
        messages.push(Message::user_text(prompt::person_turn(
            briefing,
            &conversation.cards,
            question,
        )));

        let deadline = Instant::now() + Duration::from_secs(limits::MESSAGE_SECS);
        let mut spent = Spent::default();
        let mut cards: Vec<Card> = Vec::new();
        let mut shown: Vec<Screen> = Vec::new();
        let mut text = String::new();
        let mut notice = None;
        // What the loop mended of the model's turns (`repair.rs`), and the last tool results,
        // restated when the model answers nothing from them.
        let mut repairs = 0u32;
        let mut asked_again = false;
        let mut last_results: Vec<String> = Vec::new();
        let mut several = None;
        // A change the model chose a target for when the person named nothing at all.
        let mut nothing_named = false;
        let mut asked_which = false;
        // Whether Exhale's own words stand for the answer (`repair::claims_done`).
        let mut told = false;
        // The ids the tool results of this question showed the model, and their words.
        let mut read_ids = std::collections::BTreeSet::new();
        let mut results_words = String::new();
        // The calls made for this question, as written: one made again is not run again.
        let mut made_calls = std::collections::BTreeSet::new();
        // What the person said, here and in the turn before: a change must be to something
        // they named or a tool result showed (`repair::unsaid_target`).
        let question_words = ops::tools::words(question);
        let mut said_words = question_words.clone();
        if let Some(turn) = conversation.turns.last() {
            said_words.extend(ops::tools::words(&turn.question));
            said_words.extend(ops::tools::words(&turn.answer));
        }
        let verbs: Vec<&str> =
            self.catalog.ops().iter().filter_map(|meta| meta.info.name.split('_').next()).collect();
        // The household's names the question fits equally well, if several.
        let alike = names.alike(&question_words, &verbs);
        let is_write = |name: &str| {
            self.catalog.ops().iter().any(|meta| meta.info.name == name && meta.info.is_write())
        };
        for round in 0..limits::CALLS {
            if round > 0 {
                said(Said::Restart);
            }
            let Some(remaining) = deadline.checked_duration_since(Instant::now()) else {
                notice = Some(too_slow());
                break;
            };
            let request = Request {
                model: settings.model.clone(),
                system: prompt::SYSTEM.to_owned(),
                messages: messages.clone(),
                tools: definitions.clone(),
                max_tokens: limits::TOKENS_PER_CALL,
                temperature: settings.provider.temperature(),
            };
            let span = tracing::info_span!(
                "chat",
                gen_ai.operation.name = "chat",
                gen_ai.provider.name = settings.provider.as_str(),
                gen_ai.request.model = settings.model.as_str(),
                gen_ai.usage.input_tokens = tracing::field::Empty,
                gen_ai.usage.output_tokens = tracing::field::Empty,
            );
            let mut on_event = |event: Event| {
                if let Event::Text(piece) = event {
                    said(Said::Delta { text: piece });
                }
            };
            let call = provider.complete(&request, &mut on_event).instrument(span.clone());
            let completion = match tokio::time::timeout(remaining, call).await {
                Err(_) => {
                    notice = Some(too_slow());
                    break;
                }
                Ok(Err(err)) => {
                    notice = Some(
                        Text::new("The model could not answer: {error}. Nothing else was sent.")
                            .with("error", err),
                    );
                    break;
                }
                Ok(Ok(completion)) => completion,
            };
            spent.add(completion.usage.as_ref(), &settings);
            if let Some(usage) = &completion.usage {
                span.record("gen_ai.usage.input_tokens", usage.input);
                span.record("gen_ai.usage.output_tokens", usage.output);
            }
            text = completion.message.text();
            match &completion.stop {
                StopReason::Refusal(explanation) => {
                    // The refused turn is never sent back.
                    text = explanation.clone().unwrap_or_default();
                    notice = Some(Text::new("The model declined to answer this."));
                    break;
                }
                StopReason::MaxTokens => {
                    notice = Some(
                        Text::new("The answer was cut off at {tokens} tokens.")
                            .with("tokens", limits::TOKENS_PER_CALL),
                    );
                    break;
                }
                _ => {}
            }
            let mut calls: Vec<(String, String, Value)> = completion
                .message
                .tool_calls()
                .map(|(id, name, arguments)| (id.to_owned(), name.to_owned(), arguments.clone()))
                .collect();
            // Within one question the model's turn goes back exactly as it came, reasoning
            // included; between questions only text is kept.
            let mut turn = completion.message.clone();
            if calls.is_empty() {
                let written = repair::calls_in_text(&text, &callable);
                if !written.is_empty() {
                    // A call written as text is the call; it goes back as one, so its result
                    // answers it, and the text, which was for no person, is not shown.
                    repairs += 1;
                    calls = written
                        .into_iter()
                        .enumerate()
                        .map(|(index, (name, arguments))| {
                            (format!("text_{round}_{index}"), name, arguments)
                        })
                        .collect();
                    turn = Message {
                        role: Role::Assistant,
                        parts: calls
                            .iter()
                            .map(|(id, name, arguments)| Part::ToolCall {
                                id: id.clone(),
                                name: name.clone(),
                                arguments: arguments.clone(),
                            })
                            .collect(),
                    };
                    text.clear();
                }
            }
            if calls.is_empty() {
                if !last_results.is_empty() && repair::says_nothing(&text) {
                    if !asked_again && round + 1 < limits::CALLS {
                        // Asked once more, with the results restated after them; the turn
                        // that said nothing is not kept.
                        asked_again = true;
                        repairs += 1;
                        if let Some(results) = messages.last_mut() {
                            results.parts.push(Part::Text(repair::ask_again(&last_results)));
                        }
                        continue;
                    }
                    text.clear();
                    notice = Some(Text::new(
                        "The model read what it needed but gave no answer. Ask again, perhaps in other words.",
                    ));
                }
                break;
            }
            messages.push(turn);
            let mut results = Vec::new();
            for (index, (id, name, arguments)) in calls.into_iter().enumerate() {
                let result = if index >= CALLS_PER_ROUND {
                    tool_result(
                        &id,
                        format!("Not run: at most {CALLS_PER_ROUND} tool calls at a time."),
                        true,
                    )
                } else if !made_calls.insert(format!("{name} {arguments}")) {
                    // A small model at temperature 0 repeats a call whose result it did not
                    // like, and a change made again is a second card for the same thing.
                    repairs += 1;
                    tool_result(&id, repair::REPEATED.to_owned(), true)
                } else if let Some((key, guessed)) = repair::unread_id(&arguments, &read_ids) {
                    // The briefing shows no ids: one no result showed was guessed.
                    repairs += 1;
                    let mut refusal = repair::guessed_id(&name, &key, guessed);
                    if name == Undo::INFO.name {
                        // "Undo the last change": the latest changes come with the refusal,
                        // so the model's next call can be the undo itself.
                        if let Some(latest) = self.latest_changes(&assistant).await {
                            read_ids.extend(latest.iter().map(|(id, _)| *id));
                            refusal = repair::with_latest_changes(&key, guessed, &latest);
                        }
                    }
                    tool_result(&id, refusal, true)
                } else if is_write(&name)
                    && repair::picked_among(&arguments, &alike, &question_words)
                {
                    // Asked, never guessed for: the model picked one of several alike.
                    repairs += 1;
                    several = Some(alike.join(", "));
                    tool_result(&id, repair::PICKED.to_owned(), true)
                } else if let Some(target) = is_write(&name)
                    .then(|| repair::unsaid_target(&arguments, &said_words, &results_words, &verbs))
                    .flatten()
                {
                    repairs += 1;
                    // The person's words fit several things ("Cancel Adobe"), or none: they
                    // are asked which, never guessed for.
                    if !alike.is_empty() {
                        several = Some(alike.join(", "));
                    } else if repair::only_points(&question_words)
                        && !names.any_in(&said_words, &verbs)
                        && results_words.is_empty()
                    {
                        nothing_named = true;
                    }
                    tool_result(&id, repair::unsaid(&target), true)
                } else if let Some(refusal) = (name == CreateTransaction::INFO.name)
                    .then(|| repair::wrong_sign(&arguments, &question_words))
                    .flatten()
                {
                    repairs += 1;
                    tool_result(&id, refusal, true)
                } else {
                    let mut arguments = arguments;
                    let dropped = if is_write(&name) {
                        Vec::new()
                    } else {
                        repair::drop_unsaid_filters(
                            &mut arguments,
                            &said_words,
                            &results_words,
                            &verbs,
                        )
                    };
                    let span = tracing::info_span!(
                        "execute_tool",
                        gen_ai.operation.name = "execute_tool",
                        gen_ai.tool.name = name.as_str(),
                    );
                    let made = Made {
                        cards: &mut cards,
                        screens: &mut shown,
                        several: &mut several,
                        reader: caller.language,
                    };
                    let mut result = self
                        .run_tool(&assistant, &id, &name, arguments, &text, made)
                        .instrument(span)
                        .await;
                    if let Part::ToolResult { content, is_error: false, .. } = &result {
                        repair::ids_in(content, &mut read_ids);
                        results_words.push(' ');
                        results_words.push_str(&ops::tools::words(content).join(" "));
                    }
                    if let (false, Part::ToolResult { content, .. }) =
                        (dropped.is_empty(), &mut result)
                    {
                        repairs += 1;
                        content.insert_str(0, &repair::left_out(&dropped));
                    }
                    if name == ops::tools::FindTools::INFO.name {
                        // What the search found is offered from the next call on, so the
                        // model calls it as it calls any tool.
                        offer_found(self.catalog.ops(), &assistant, &result, &mut definitions);
                    }
                    result
                };
                results.push(result);
            }
            last_results = results
                .iter()
                .filter_map(|part| match part {
                    Part::ToolResult { content, .. } => Some(content.clone()),
                    _ => None,
                })
                .collect();
            messages.push(Message { role: Role::User, parts: results });
            let which = several
                .take()
                .map(|candidates| {
                    Text::new("Which one do you mean: {candidates}?").with("candidates", candidates)
                })
                .or_else(|| {
                    nothing_named.then(|| Text::new("Which one do you mean? Tell me its name."))
                });
            if let Some(which) = which {
                // A question to the person, in their language, never a guess: the model is
                // not asked again.
                text.clear();
                asked_which = true;
                notice = Some(which);
                break;
            }
            if round + 1 == limits::CALLS {
                notice = Some(
                    Text::new("I stopped after {calls} model calls for one message. Ask again for what is left.")
                        .with("calls", limits::CALLS),
                );
            }
        }

        if !cards.is_empty() && repair::claims_done(&text) {
            // The model reported as made a change that waits for the person's tap: the person
            // is told the truth instead, in their language, beside the card.
            repairs += 1;
            text.clear();
            if notice.is_none() {
                notice = Some(Text::new(
                    "Not done yet: nothing changes until you tap Confirm on the card.",
                ));
                told = true;
            }
        }
        tracing::info!(
            provider = settings.provider.as_str(),
            rounds = spent.calls,
            input_tokens = spent.input,
            output_tokens = spent.output,
            cards = cards.len(),
            repairs,
            "assistant answered"
        );
        if spent.calls > 0 {
            let usage = Usage {
                purpose: UsagePurpose::Question,
                provider: settings.provider,
                model: settings.model.clone(),
                calls: spent.calls,
                input_tokens: spent.input,
                output_tokens: spent.output,
                cost_micro_usd: spent.cost(),
                repairs,
            };
            self.store.record_usage(caller, usage).await?;
        }
        // A question Exhale asked stands as the answer in the conversation, so the person's
        // reply ("the first one") reads against it; so do its words in place of a false claim.
        let answered = match (&notice, asked_which || told) {
            (Some(said), true) => said.render(),
            _ => text.clone(),
        };
        let turn = Turn { question: question.to_owned(), answer: answered };
        self.store.remember(caller, turn, &cards).await?;
        Ok(Answer { text, cards, screens: shown, notice })
    }

    /// Runs one tool call as the assistant; what the model reads back.
    async fn run_tool(
        &self,
        assistant: &Caller,
        id: &str,
        name: &str,
        arguments: Value,
        said: &str,
        made: Made<'_>,
    ) -> Part {
        let Made { cards, screens: shown, several, reader } = made;
        if name == screens::NAME {
            if shown.len() >= limits::SCREENS {
                let line = format!("Not shown: at most {} screens per answer.", limits::SCREENS);
                return tool_result(id, line, true);
            }
            return match screens::build(self.catalog.as_ref(), assistant, arguments).await {
                Ok(screen) => {
                    let reply = format!("Shown to the person: {}.", screens::described(&screen));
                    shown.push(screen);
                    tool_result(id, reply, false)
                }
                Err(line) => tool_result(id, line, true),
            };
        }
        // find_tools tells a model it may call what it found through call_tool, as MCP clients
        // do; here that is the same as calling it by name.
        let (name, arguments) =
            match tools::through_call_tool(self.catalog.as_ref(), name, arguments) {
                Ok(called) => called,
                Err(err) => return tool_result(id, refused(&err), true),
            };
        let Some(meta) = tools::callable(self.catalog.ops(), assistant, name) else {
            return tool_result(
                id,
                format!(
                    "not_found: no tool named {name} that you may call. Call find_tools with a few words to find one."
                ),
                true,
            );
        };
        let mut arguments = match arguments {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            _ => {
                return tool_result(
                    id,
                    "invalid_input: the arguments must be a JSON object.".into(),
                    true,
                );
            }
        };
        if !meta.info.is_write() {
            ops::tools::cap_page(meta, &mut arguments);
            return match self
                .catalog
                .call_json(assistant, name, Value::Object(arguments), Mode::Apply)
                .await
            {
                Ok(output) => tool_result(id, fitted(output), false),
                Err(err) => {
                    *several = ops::resolve::several_match(&err);
                    tool_result(id, refused(&err), true)
                }
            };
        }
        for key in SKIPPING_KEYS {
            arguments.remove(*key);
        }
        if cards.len() >= limits::PROPOSALS {
            return tool_result(
                id,
                format!(
                    "Not prepared: at most {} changes per message. Tell the person which are left for their next message.",
                    limits::PROPOSALS
                ),
                true,
            );
        }
        // The catalog asks the person for every write of the assistant (checked when the
        // assistant starts): this previews the call and stores it as a proposal.
        let arguments = Value::Object(arguments);
        match self.catalog.call_json(assistant, name, arguments.clone(), Mode::Apply).await {
            Err(OpError::ConfirmationRequired {
                confirmation_id,
                expires_at,
                preview,
                message,
            }) => {
                let reply = json!({
                    "prepared": meta.info.summary,
                    "changes": cards::lines(&preview),
                    "applied": false,
                    "note": message.render(),
                });
                // Said first, in words a small model repeats rather than "has been added".
                let reply = format!(
                    "Not done yet: waiting for the person to confirm. Tell them to tap Confirm on the card to {}; never say it is done.\n{reply}",
                    lowercase_first(meta.info.summary)
                );
                // The card is the person's: its lines from the same dry run, said in their
                // language, where the model above reads English.
                let theirs = assistant.clone().reading(reader);
                let preview = match reader {
                    ops::Language::English => *preview,
                    _ => self
                        .catalog
                        .call_json(&theirs, name, arguments, Mode::DryRun)
                        .await
                        .unwrap_or(*preview),
                };
                let card = cards::card(meta.info, confirmation_id, expires_at, &preview, said);
                cards.push(card);
                tool_result(id, reply, false)
            }
            Err(err) => {
                *several = ops::resolve::several_match(&err);
                tool_result(id, refused(&err), true)
            }
            Ok(_) => {
                tracing::error!(op = name, "a write of the assistant applied without a card");
                tool_result(id, "internal: this change could not be prepared.".into(), true)
            }
        }
    }

    /// The household's latest changes the assistant may see, not undone yet, one line each
    /// with the id to pass (a small model copies an id from a line better than from JSON).
    async fn latest_changes(&self, assistant: &Caller) -> Option<Vec<(i64, String)>> {
        let latest = ListActivityInput {
            limit: Some(ops::limits::LATEST_CHANGES),
            ..ListActivityInput::default()
        };
        let page =
            ops::call::<ListActivity>(self.catalog.as_ref(), assistant, &latest, Mode::Apply)
                .await
                .ok()?;
        let lines: Vec<(i64, String)> = page
            .items
            .into_iter()
            .filter(|entry| entry.undone_by.is_none())
            .map(|entry| {
                (entry.id, format!("{} ({}, {})", entry.summary, entry.at, entry.actor.label))
            })
            .collect();
        (!lines.is_empty()).then_some(lines)
    }

    /// What the person does with one of their cards.
    async fn act_on(
        &self,
        caller: &Caller,
        proposal_id: &str,
        action: ProposalAction,
    ) -> Result<Card, OpError> {
        let conversation = self.store.conversation(caller).await?;
        let mut card = conversation
            .cards
            .into_iter()
            .find(|card| card.id == proposal_id)
            .ok_or_else(|| {
                OpError::not_found(Text::new(
                    "No proposal with this id in your conversation. It may have expired (30 minutes); ask the assistant again.",
                ))
            })?;
        match (action, card.status) {
            (ProposalAction::Confirm, ProposalStatus::Pending) => {
                let output = self.store.apply_proposal(caller, proposal_id).await?;
                card.audit_ids = output
                    .get("audit_ids")
                    .and_then(Value::as_array)
                    .map(|ids| ids.iter().filter_map(Value::as_i64).collect())
                    .unwrap_or_default();
                card.status = ProposalStatus::Applied;
            }
            (ProposalAction::Discard, ProposalStatus::Pending) => {
                self.store.discard_proposal(caller, proposal_id).await?;
                card.status = ProposalStatus::Discarded;
            }
            (ProposalAction::Undo, ProposalStatus::Applied) => {
                let audit_ids: Option<Vec<RecordId>> =
                    card.audit_ids.iter().copied().map(RecordId::new).collect();
                let input =
                    UndoInput { audit_ids: audit_ids.ok_or(OpError::Internal)?, batch_id: None };
                ops::call::<Undo>(self.catalog.as_ref(), caller, &input, Mode::Apply).await?;
                card.status = ProposalStatus::Undone;
            }
            (_, status) => {
                return Err(OpError::conflict(
                    Text::new("This proposal is {status}: only a pending proposal can be confirmed or discarded, and only an applied one undone.")
                        .with("status", status.as_str()),
                ));
            }
        }
        self.store.update_card(caller, &card).await?;
        Ok(card)
    }
}

fn too_slow() -> Text {
    Text::new("The answer took longer than {secs} seconds, so I stopped. Ask again, perhaps more narrowly.")
        .with("secs", limits::MESSAGE_SECS)
}

impl Ask for Assistant {
    fn ask<'a>(
        &'a self,
        caller: &'a Caller,
        question: &'a str,
        said: &'a mut (dyn FnMut(Said) + Send),
    ) -> BoxFuture<'a, Result<Answer, OpError>> {
        Box::pin(self.answer(caller, question, said))
    }

    fn act<'a>(
        &'a self,
        caller: &'a Caller,
        proposal_id: &'a str,
        action: ProposalAction,
    ) -> BoxFuture<'a, Result<Card, OpError>> {
        Box::pin(self.act_on(caller, proposal_id, action))
    }

    fn conversation<'a>(
        &'a self,
        caller: &'a Caller,
    ) -> BoxFuture<'a, Result<Conversation, OpError>> {
        self.store.conversation(caller)
    }

    fn is_on<'a>(&'a self, caller: &'a Caller) -> BoxFuture<'a, Result<bool, OpError>> {
        Box::pin(async move { Ok(self.store.provider(caller.household_id).await?.is_some()) })
    }

    fn read_statement<'a>(
        &'a self,
        caller: &'a Caller,
        document: Document,
    ) -> BoxFuture<'a, Result<DocumentReading, OpError>> {
        Box::pin(self.read(caller, document))
    }

    fn read_document<'a>(
        &'a self,
        caller: &'a Caller,
        bytes: Vec<u8>,
    ) -> BoxFuture<'a, Result<ops::assistant::Reading, OpError>> {
        Box::pin(self.read_for_import(caller, bytes))
    }

    fn tidy_names<'a>(
        &'a self,
        caller: &'a Caller,
        merchants: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<String>, OpError>> {
        Box::pin(self.tidy(caller, merchants))
    }
}

/// `summary` with its first letter in lower case, to follow "to".
fn lowercase_first(summary: &str) -> String {
    let mut letters = summary.chars();
    letters.next().map_or_else(String::new, |first| first.to_lowercase().chain(letters).collect())
}
