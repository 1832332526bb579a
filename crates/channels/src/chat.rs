//! The chat glue Telegram and Slack share: what a linked member's message or button press
//! does, as replies made of a title, lines and buttons that each service draws in its own
//! format. Commands read through the catalog as the member; anything else goes to the
//! assistant when it is on, its answer shown as it is written (through a [`Surface`]) and its
//! cards as Confirm, Discard and Undo buttons. A press is acted on as the member who pressed,
//! so a button from someone else's message does nothing they may not do.

use std::{cell::Cell, sync::Arc, time::Duration};

use i18n::Language;

use ops::{
    Caller, Catalog, Mode, OpError, Text,
    activity::{Undo, UndoInput},
    assistant::{Ask, Card, ProposalAction, ProposalStatus, Reading, Said},
    channels::{Chats, Message},
    charges::{ListUpcomingCharges, ListUpcomingInput},
    import::{ImportItem, ImportSubscriptions, ImportSubscriptionsInput},
    registry::{ListActivity, ListActivityInput},
    reports::{GetSpendingSummary, SpendingSummaryInput},
    subscriptions::{ListSubscriptions, ListSubscriptionsInput},
};

/// The most often a streaming answer is edited: chat services tolerate about one message a
/// second per chat.
const EDIT_EVERY: Duration = Duration::from_millis(1500);

/// How a button looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    Primary,
    Success,
    Danger,
}

/// What a button does: send Exhale this data (at most 64 bytes, Telegram's limit), or open a
/// page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Press(String),
    Open(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Button {
    pub(crate) label: String,
    pub(crate) action: Action,
    pub(crate) style: Style,
}

/// A message to show: plain text, which each service escapes and formats.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Reply {
    /// Shown bold.
    pub(crate) title: Option<String>,
    pub(crate) lines: Vec<String>,
    /// Shown in italics, after the lines.
    pub(crate) note: Option<String>,
    pub(crate) buttons: Vec<Button>,
}

impl Reply {
    pub(crate) fn text(text: impl Into<String>) -> Self {
        Self { lines: vec![text.into()], ..Self::default() }
    }

    /// Everything as one plain text, for a notification or a screen reader.
    pub(crate) fn plain(&self) -> String {
        let mut parts: Vec<String> = self.title.iter().cloned().collect();
        parts.extend(self.lines.iter().cloned());
        parts.extend(self.note.iter().cloned());
        parts.join("\n")
    }
}

/// Where a chat's replies go: the service's send, edit and "typing…".
pub(crate) trait Surface {
    /// A sent message, to edit.
    type Sent: Clone + Send;
    fn send(&self, reply: &Reply) -> impl Future<Output = Option<Self::Sent>> + Send;
    fn edit(&self, sent: &Self::Sent, reply: &Reply) -> impl Future<Output = ()> + Send;
    fn typing(&self) -> impl Future<Output = ()> + Send;
}

tokio::task_local! {
    /// The language the chat update being answered is written in.
    static READER: Cell<Language>;
}

/// Answers one update in the language its sender reads: their chat client's (Telegram sends
/// its code) until the member is known, then theirs ([`read_by`]). Every [`say`] while
/// answering reads it.
pub(crate) async fn answer_in<F: Future>(client_language: Option<&str>, answer: F) -> F::Output {
    READER.scope(Cell::new(i18n::choose(None, None, client_language)), answer).await
}

/// The rest of this update is written in the linked member's language.
pub(crate) fn read_by(caller: &Caller) {
    // Outside an update (a bot starting up) there is nobody to write for.
    let _ = READER.try_with(|reader| reader.set(caller.language));
}

fn reader() -> Language {
    READER.try_with(Cell::get).unwrap_or_default()
}

/// A sentence as the chat's reader reads it (English outside an update).
pub(crate) fn say(text: &Text) -> String {
    i18n::say(reader(), text)
}

/// An op's amount as the chat's reader writes it.
fn money(amount: &ops::common::Amount) -> String {
    i18n::format::amount(reader(), amount.amount, amount.currency.currency())
}

fn button(label: Text, data: String, style: Style) -> Button {
    Button { label: say(&label), action: Action::Press(data), style }
}

/// A reminder or an agent's change: Undo for a change, Open when Exhale has a public `https`
/// address (chat services refuse others).
pub(crate) fn message(message: &Message) -> Reply {
    let mut buttons = Vec::new();
    if let Some(batch) = &message.batch {
        buttons.push(button(Text::new("Undo"), format!("u:{batch}"), Style::Danger));
    }
    if let Some(open) = message.open.as_ref().filter(|l| l.url.starts_with("https://")) {
        buttons.push(Button {
            label: open.label.clone(),
            action: Action::Open(open.url.clone()),
            style: Style::Primary,
        });
    }
    Reply { title: Some(message.title.clone()), lines: message.lines.clone(), note: None, buttons }
}

/// A proposal as the person is shown it: what Exhale will do, in Exhale's words, with the
/// buttons its status allows.
pub(crate) fn card(card: &Card) -> Reply {
    let status = match card.status {
        ProposalStatus::Pending => Text::new("Confirm?"),
        ProposalStatus::Applied => Text::new("Done."),
        ProposalStatus::Discarded => Text::new("Discarded."),
        ProposalStatus::Undone => Text::new("Undone."),
    };
    let id = &card.id;
    let buttons = match card.status {
        ProposalStatus::Pending => vec![
            button(
                Text::new("Confirm"),
                format!("c:{id}"),
                if card.destructive { Style::Danger } else { Style::Success },
            ),
            button(Text::new("Discard"), format!("d:{id}"), Style::Primary),
        ],
        ProposalStatus::Applied => {
            vec![button(Text::new("Undo"), format!("x:{id}"), Style::Danger)]
        }
        ProposalStatus::Discarded | ProposalStatus::Undone => Vec::new(),
    };
    Reply {
        title: Some(say(&Text::new(&card.title))),
        lines: card.lines.clone(),
        note: Some(say(&status)),
        buttons,
    }
}

pub(crate) fn help() -> String {
    say(&Text::new(
        "Commands: upcoming, totals, subscriptions, undo. Reminders and agents' changes arrive here.",
    ))
}

/// The reply to a link code: who the chat now belongs to, or why not.
pub(crate) fn linked(name: Option<&str>) -> Reply {
    Reply::text(match name {
        Some(name) => say(&Text::new(
            "Linked to Exhale as {name}. Your reminders and agents' changes will come here. {help}",
        )
        .with("name", name)
        .with("help", help())),
        None => say(&Text::new(
            "That link did not work: it was used or it expired. Make a new one in Exhale, Settings → Reminders.",
        )),
    })
}

pub(crate) fn not_linked() -> Reply {
    Reply::text(say(&Text::new(
        "This chat is not linked to Exhale. In Exhale, open Settings → Reminders and link this chat.",
    )))
}

/// What a household's chats reach: the linked chats and their bots, the catalog and the
/// assistant.
#[derive(Clone)]
pub struct ChatServices {
    /// The bots, the linked chats, and where a document's import waits for its Import button,
    /// on whichever instance the press lands.
    pub chats: Arc<dyn Chats>,
    pub catalog: Arc<dyn Catalog>,
    pub assistant: Arc<dyn Ask>,
}

impl ChatServices {
    pub fn new(chats: Arc<dyn Chats>, catalog: Arc<dyn Catalog>, assistant: Arc<dyn Ask>) -> Self {
        Self { chats, catalog, assistant }
    }

    /// A file the member sent: read as the web's import reads it, and offered for import behind
    /// a button.
    pub(crate) async fn on_document<S: Surface>(
        &self,
        surface: &S,
        caller: &Caller,
        bytes: Vec<u8>,
    ) {
        surface.typing().await;
        let items: Vec<(ImportItem, Option<String>)> =
            match self.assistant.read_document(caller, bytes).await {
                Ok(Reading::Statement(parsed)) => parsed
                    .candidates
                    .iter()
                    .filter(|c| c.proposed || c.existing.is_some())
                    .map(|c| (c.import_item(), c.existing.as_ref().map(|e| e.name.clone())))
                    .collect(),
                Ok(Reading::Model(reading)) => {
                    reading.items.iter().map(|item| (item.import_item(), None)).collect()
                }
                Err(err) => {
                    surface.send(&Reply::text(say(&err.text()))).await;
                    return;
                }
            };
        let lines: Vec<String> = items
            .iter()
            .map(|(item, existing)| {
                let line = format!(
                    "{} · {} {}",
                    item.name,
                    item.amount,
                    item.currency.map_or("", ops::common::CurrencyCode::code)
                );
                match existing {
                    Some(name) => say(&Text::new("{line} (already here as {name})")
                        .with("line", line.trim())
                        .with("name", name)),
                    None => line.trim().to_owned(),
                }
            })
            .collect();
        let new: Vec<ImportItem> = items
            .into_iter()
            .filter(|(_, existing)| existing.is_none())
            .map(|(item, _)| item)
            .collect();
        if new.is_empty() {
            let reply = Reply {
                title: Some(say(&Text::new("Nothing new to import"))),
                lines,
                ..Reply::default()
            };
            surface.send(&reply).await;
            return;
        }
        let count = new.len();
        let key = match self.chats.hold_import(caller, &new).await {
            Ok(key) => key,
            Err(err) => {
                surface.send(&Reply::text(say(&err.text()))).await;
                return;
            }
        };
        let reply = Reply {
            title: Some(say(&Text::new("{count, plural, one {Found # subscription to add} other {Found # subscriptions to add}}").with("count", count))),
            lines,
            note: Some(say(&Text::new(
                "Check them, then import; you can change them in Exhale afterwards.",
            ))),
            buttons: vec![button(
                Text::new("Import {count}").with("count", count),
                format!("i:{key}"),
                Style::Success,
            )],
        };
        surface.send(&reply).await;
    }

    /// A linked member's message: a command, else a question for the assistant when it is on.
    pub(crate) async fn on_text<S: Surface>(&self, surface: &S, caller: &Caller, text: &str) {
        let command = text.split_whitespace().next().unwrap_or_default().trim_start_matches('/');
        let command = command.split('@').next().unwrap_or(command).to_lowercase();
        let reply = match command.as_str() {
            "upcoming" => self.upcoming(caller).await,
            "totals" => self.totals(caller).await,
            "subscriptions" => self.subscriptions(caller).await,
            "undo" => self.offer_undo(caller).await,
            "help" | "start" => Ok(Reply::text(help())),
            _ if text.trim().is_empty() => Ok(Reply::text(help())),
            _ if self.assistant.is_on(caller).await.unwrap_or(false) => {
                return self.ask(surface, caller, text).await;
            }
            _ => Ok(Reply::text(say(&Text::new(
                "The assistant is off in this household, so I only know commands. {help}",
            )
            .with("help", help())))),
        };
        let reply = reply.unwrap_or_else(|err| Reply::text(say(&err.text())));
        surface.send(&reply).await;
    }

    async fn upcoming(&self, caller: &Caller) -> Result<Reply, OpError> {
        let input = ListUpcomingInput { days: Some(14), ..Default::default() };
        let upcoming =
            ops::call::<ListUpcomingCharges>(&*self.catalog, caller, &input, Mode::Apply).await?;
        let mut lines: Vec<String> = upcoming
            .items
            .iter()
            .take(30)
            .map(|item| {
                let on = i18n::format::date(reader(), item.charge_on.date());
                format!("{on} · {} · {}", item.subscription.name, money(&item.amount))
            })
            .collect();
        if lines.is_empty() {
            lines.push(say(&Text::new("Nothing is due.")));
        }
        let note = (!upcoming.totals.is_empty()).then(|| {
            let totals: Vec<String> = upcoming.totals.iter().map(money).collect();
            say(&Text::new("Total {amount}").with("amount", totals.join(" + ")))
        });
        Ok(Reply {
            title: Some(say(&Text::new("The next two weeks"))),
            lines,
            note,
            buttons: Vec::new(),
        })
    }

    async fn totals(&self, caller: &Caller) -> Result<Reply, OpError> {
        let summary = ops::call::<GetSpendingSummary>(
            &*self.catalog,
            caller,
            &SpendingSummaryInput::default(),
            Mode::Apply,
        )
        .await?;
        let title =
            say(&Text::new("{monthly} a month, {yearly} a year, for {count, plural, one {# subscription} other {# subscriptions}}")
                .with("monthly", money(&summary.monthly))
                .with("yearly", money(&summary.yearly))
                .with("count", summary.subscription_count));
        let lines = summary
            .groups
            .iter()
            .take(10)
            .map(|g| format!("{} · {}", g.label, money(&g.monthly)))
            .collect();
        Ok(Reply { title: Some(title), lines, note: None, buttons: Vec::new() })
    }

    async fn subscriptions(&self, caller: &Caller) -> Result<Reply, OpError> {
        let input = ListSubscriptionsInput { limit: Some(30), ..Default::default() };
        let page =
            ops::call::<ListSubscriptions>(&*self.catalog, caller, &input, Mode::Apply).await?;
        let title =
            say(&Text::new("{count, plural, one {# subscription} other {# subscriptions}}")
                .with("count", page.total));
        let lines = page
            .items
            .iter()
            .map(|s| {
                format!("{} · {} · {}", s.name, money(&s.price), i18n::cycle(reader(), &s.cycle))
            })
            .collect();
        Ok(Reply { title: Some(title), lines, note: None, buttons: Vec::new() })
    }

    /// The newest change the member may undo, behind a button.
    async fn offer_undo(&self, caller: &Caller) -> Result<Reply, OpError> {
        let input = ListActivityInput { limit: Some(10), ..Default::default() };
        let page = ops::call::<ListActivity>(&*self.catalog, caller, &input, Mode::Apply).await?;
        let Some(entry) = page.items.iter().find(|entry| entry.undone_by.is_none()) else {
            return Ok(Reply::text(say(&Text::new("Nothing to undo."))));
        };
        Ok(Reply {
            title: Some(say(&Text::new("Undo this?"))),
            lines: vec![entry.summary.clone()],
            note: None,
            buttons: vec![button(
                Text::new("Undo"),
                format!("u:{}", entry.batch_id),
                Style::Danger,
            )],
        })
    }

    /// A question for the assistant: typing, the answer shown and edited as it is written,
    /// then its cards.
    async fn ask<S: Surface>(&self, surface: &S, caller: &Caller, question: &str) {
        surface.typing().await;
        let so_far = Arc::new(std::sync::Mutex::new(String::new()));
        let written = so_far.clone();
        let mut said = move |piece: Said| {
            if let Ok(mut text) = written.lock() {
                match piece {
                    Said::Delta { text: delta } => text.push_str(&delta),
                    Said::Restart => text.clear(),
                }
            }
        };
        let mut shown: Option<(S::Sent, String)> = None;
        let answer = {
            let asking = self.assistant.ask(caller, question, &mut said);
            tokio::pin!(asking);
            let mut ticker = tokio::time::interval(EDIT_EVERY);
            ticker.tick().await;
            loop {
                tokio::select! {
                    answer = &mut asking => break answer,
                    _ = ticker.tick() => {
                        let text = so_far.lock().map(|t| t.clone()).unwrap_or_default();
                        if text.trim().is_empty() || shown.as_ref().is_some_and(|(_, s)| *s == text) {
                            surface.typing().await;
                            continue;
                        }
                        let reply = Reply::text(text.clone());
                        match &shown {
                            Some((sent, _)) => surface.edit(sent, &reply).await,
                            None => if let Some(sent) = surface.send(&reply).await { shown = Some((sent, String::new())); },
                        }
                        if let Some((_, last)) = shown.as_mut() { *last = text; }
                    }
                }
            }
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(err) => {
                surface.send(&Reply::text(say(&err.text()))).await;
                return;
            }
        };
        let mut reply = Reply::text(if answer.text.trim().is_empty() {
            say(&Text::new("Done."))
        } else {
            answer.text.clone()
        });
        reply.note = answer.notice.as_ref().map(Text::render);
        match &shown {
            Some((sent, _)) => surface.edit(sent, &reply).await,
            None => {
                surface.send(&reply).await;
            }
        }
        for proposal in &answer.cards {
            surface.send(&card(proposal)).await;
        }
    }

    /// A button press by the linked member: the message's new look, or why nothing happened
    /// (a short note for the service's toast).
    pub(crate) async fn on_press(&self, caller: &Caller, data: &str) -> Result<Reply, String> {
        let (kind, id) = data.split_once(':').unwrap_or(("", ""));
        match kind {
            "u" => {
                let input = UndoInput { batch_id: Some(id.to_owned()), ..UndoInput::default() };
                match ops::call::<Undo>(&*self.catalog, caller, &input, Mode::Apply).await {
                    Ok(_) => Ok(Reply::text(say(&Text::new("Undone.")))),
                    Err(err) => Err(say(&err.text())),
                }
            }
            "c" | "d" | "x" => {
                let action = match kind {
                    "c" => ProposalAction::Confirm,
                    "d" => ProposalAction::Discard,
                    _ => ProposalAction::Undo,
                };
                self.assistant
                    .act(caller, id, action)
                    .await
                    .map(|c| card(&c))
                    .map_err(|err| say(&err.text()))
            }
            "i" => {
                let items = match self.chats.take_import(caller, id).await {
                    Ok(Some(items)) => items,
                    Ok(None) => {
                        return Err(say(&Text::new(
                            "That import is no longer waiting; send the file again.",
                        )));
                    }
                    Err(err) => return Err(say(&err.text())),
                };
                let input = ImportSubscriptionsInput { items };
                match ops::call::<ImportSubscriptions>(&*self.catalog, caller, &input, Mode::Apply)
                    .await
                {
                    Ok(result) => {
                        Ok(Reply::text(say(&Text::new("Imported {created}; skipped {skipped}.")
                            .with("created", result.created.len())
                            .with("skipped", result.skipped.len()))))
                    }
                    Err(err) => {
                        // Nothing was imported: the button works again, for another try.
                        let _ = self.chats.put_back_import(caller, id, &input.items).await;
                        Err(say(&err.text()))
                    }
                }
            }
            _ => Err(say(&Text::new("That button is not Exhale's."))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn button_data_fits_telegrams_64_bytes() {
        let proposal = Card {
            id: format!("cf_{}", "a".repeat(32)),
            op: "cancel_subscription".into(),
            title: "Cancel Gym".into(),
            lines: vec![],
            destructive: true,
            said: None,
            status: ProposalStatus::Pending,
            expires_at: "2026-12-01T10:00:00Z".into(),
            audit_ids: vec![],
        };
        for button in card(&proposal).buttons {
            let Action::Press(data) = button.action else { panic!("a card's buttons are presses") };
            assert!(data.len() <= 64, "{data}");
        }
    }
}
