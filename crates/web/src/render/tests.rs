//! Every template renders with fixture data shaped like the ops' outputs, in strict mode, so
//! a misspelt field fails here rather than rendering as nothing.

use serde_json::{Value, json};

use crate::templates::Templates;

fn amount(text: &str) -> Value {
    json!({"amount": text, "currency": "EUR", "display": format!("€{text}")})
}

fn subscription() -> Value {
    json!({
        "id": 7, "name": "Netflix", "status": "active", "visibility": "household",
        "price": amount("12.99"), "monthly": amount("12.99"), "yearly": amount("155.88"),
        "cycle": {"every": 1, "unit": "month", "preset": "monthly", "description": "monthly"},
        "next_charge_on": "2026-12-15", "category": {"id": 1, "name": "Streaming"},
        "payment_method": {"id": 2, "name": "Visa"}, "owner": {"id": 1, "name": "Ana"},
        "tags": ["family"], "url": "https://netflix.example", "notes": "Shared",
    })
}

/// A person signed in on the web with `role`.
fn person(role: ops::Role) -> ops::Caller {
    ops::Caller {
        household_id: 1,
        member_id: 1,
        role,
        scope: ops::Scope::Write,
        actor: ops::Actor::Person,
        via: ops::Via::Web,
        language: ops::Language::English,
    }
}

fn chrome(mut data: Value) -> Value {
    data["me"] = json!({"name": "Ana"});
    data["may"] = super::may(&person(ops::Role::Owner));
    data["csrf"] = json!("csrf-token");
    data["notice"] = json!("Added Netflix.");
    // Every page gets the catalog's limits (`render::page_with_status`).
    data["limits"] = json!(ops::limits::FORMS);
    data
}

fn fixture(name: &str) -> Value {
    let entry = json!({
        "id": 3, "at": "2026-11-29T10:00:00Z", "actor": {"kind": "agent", "label": "Claude (token laptop)"},
        "op": "delete_subscription", "entity": "subscription", "entity_id": 7, "action": "deleted",
        "summary": "Deleted Netflix", "batch_id": "b1", "undone_by": null,
    });
    match name {
        "setup.html" => {
            json!({"secret": "s", "form_token": "f", "values": {"currency": "EUR"}, "error": "A password needs 10 to 256 characters."})
        }
        "sign_in.html" => {
            json!({"form_token": "f", "next": "/", "needs_setup": true, "email": "ana@a.test", "error": "Wrong email or password."})
        }
        "overview.html" => chrome(json!({
            "nav": "overview", "live": true, "live_since": 3,
            "summary": {"monthly": amount("40.00"), "yearly": amount("480.00"), "subscription_count": 2,
                        "groups": [{"label": "Streaming", "monthly": amount("12.99")}]},
            "chart": "<svg></svg>",
            "upcoming": {"items": [{"charge_on": "2026-12-01", "subscription": {"id": 7, "name": "Netflix"}, "amount": amount("12.99")}]},
            "attention": [{"kind": "price_increase", "message": "Netflix went up."}],
            "activity": [entry],
        })),
        "subscriptions.html" => chrome(json!({
            "nav": "subscriptions", "q": "net", "status": "active", "sort": "name", "category": "1", "tag": "family",
            "list": {"items": [subscription()], "total": 1, "next_cursor": "o1"},
            "categories": [{"id": 1, "name": "Streaming"}],
        })),
        "subscription.html" => {
            // get_subscription: the subscription's fields, then its history.
            let mut detail = subscription();
            detail["price_history"] =
                json!([{"effective_on": "2026-01-01", "price": amount("12.99")}]);
            detail["pauses"] = json!([]);
            detail["recent_charges"] = json!([{"id": 1, "charged_on": "2026-11-15", "amount": amount("12.99"), "status": "paid"}]);
            detail["next_charges"] =
                json!([{"charge_on": "2026-12-15", "amount": amount("12.99")}]);
            chrome(json!({
                "nav": "subscriptions", "s": detail,
                "errors": {"price": "amount: not a number", "charges": "status: unknown"},
                "price_chart": "<svg></svg>",
                "cycles": [{"value": "monthly", "label": "Monthly"}],
            }))
        }
        "subscription_form.html" => chrome(json!({
            "nav": "subscriptions", "error": "amount: not a number",
            "values": {"name": "Gym", "cycle": "custom", "every": "4", "unit": "week", "category_id": "1"},
            "categories": [{"id": 1, "name": "Streaming"}], "payment_methods": [{"id": 2, "name": "Visa"}],
            "cycles": [{"value": "monthly", "label": "Monthly"}, {"value": "custom", "label": "Custom…"}],
        })),
        "subscription_edit.html" => chrome(json!({
            "nav": "subscriptions", "s": subscription(), "error": "name: required",
            "values": {"name": "Netflix", "url": "", "notes": "", "category_id": "1", "payment_method_id": "", "tags": "family", "visibility": "household"},
            "categories": [{"id": 1, "name": "Streaming"}], "payment_methods": [{"id": 2, "name": "Visa"}],
        })),
        "confirm.html" => chrome(json!({
            "title": "Delete Netflix?", "explanation": "It goes.", "changes": [{"summary": "Deleted Netflix"}],
            "action": "/subscriptions/7/delete", "confirm_label": "Delete", "cancel": "/subscriptions/7", "batch": "b1",
            "hidden": [{"name": "ids", "value": "3"}, {"name": "ids", "value": "4"}, {"name": "confirmed", "value": "yes"}],
        })),
        "activity.html" => chrome(json!({
            "nav": "activity", "actor": "", "activity": {"items": [entry], "total": 1, "next_cursor": "o50"},
            "usage": [
                {"at": "2026-11-29T10:00:00Z", "member": {"id": 1, "name": "Ana"}, "via": "assistant", "purpose": "question",
                 "provider": "ollama", "model": "qwen2.5:7b", "calls": 2, "input_tokens": 2000, "output_tokens": 100, "cost_usd": "0.003", "repairs": 1},
                {"at": "2026-11-29T11:00:00Z", "via": "assistant", "purpose": "question",
                 "provider": "ollama", "model": "qwen2.5:7b", "calls": 1, "input_tokens": 900, "output_tokens": 30},
            ],
        })),
        "tokens.html" => chrome(json!({
            "nav": "connect", "error": "name: required", "default_tools": "subscriptions",
            "tokens": [
                {"id": 1, "name": "Laptop", "scope": "write", "tools": "compact", "prefix": "exh_12ab", "created_at": "2026-11-01T10:00:00Z",
                 "last_used_at": "2026-11-29T09:00:00Z", "expires_at": "2027-11-01T10:00:00Z", "revoked_at": null},
                {"id": 2, "name": "Old", "scope": "read", "tools": "full", "prefix": "exh_34cd", "created_at": "2026-10-01T10:00:00Z",
                 "last_used_at": null, "expires_at": null, "revoked_at": "2026-11-02T10:00:00Z"},
            ],
            "apps": [
                {"id": 3, "name": "Claude", "scope": "write", "tools": "subscriptions", "connected_at": "2026-11-20T10:00:00Z", "last_used_at": "2026-11-29T09:00:00Z"},
                {"id": 4, "name": "Cursor", "scope": "read", "tools": "full", "connected_at": "2026-11-21T10:00:00Z"},
            ],
        })),
        "connect.html" => chrome(json!({
            "nav": "connect", "secret": "exh_secret", "token": {"name": "Laptop", "scope": "write"},
            "qr": "<svg></svg>", "url": "http://127.0.0.1:8080/mcp",
            "remote": {"url": "http://127.0.0.1:8080/mcp", "public": false},
            "configs": [{"client": "Claude Desktop", "file": "claude_desktop_config.json", "text": "{}"}],
        })),
        "export.html" => chrome(json!({"nav": "export"})),
        "offline.html" => json!({"limits": ops::limits::FORMS}),
        "import.html" => {
            chrome(json!({"nav": "import", "error": "The file is empty.", "max_mb": 5}))
        }
        "import_review.html" => chrome(json!({
            "nav": "import",
            "parsed": {"transaction_count": 40, "notes": ["UTF-8, comma-separated"], "problems": [{"line": 7, "message": "“x” is not a date"}]},
            "candidates": [{
                "name": "Netflix", "merchant": "NETFLIX", "amount": amount("15.99"), "cycle": "monthly", "active": true,
                "proposed": true, "existing": {"id": 3, "name": "Netflix"}, "category": {"id": 1, "name": "Streaming"},
                "charges": [{"date": "2026-01-15", "amount": amount("13.99")}], "price_changes": [{"on": "2026-05-15"}], "amount_varies": true,
                "charges_json": "[]", "confidence": 0.9, "next_expected_on": "2026-12-15",
            }],
            "categories": [{"id": 1, "name": "Streaming"}],
            "cycles": [{"value": "monthly", "label": "Monthly"}],
        })),
        "backups.html" => chrome(json!({
            "nav": "settings",
            "backups": {
                "dir": "/var/backups/exhale", "every": "6h", "keep": 14, "sealed": true, "downloadable": false,
                "files": [{"name": "exhale-20261206T163000Z.db.age", "made_at": "2026-12-06T16:30:00Z", "kilobytes": 812}],
                "next_at": "2026-12-06T22:30:00Z",
                "last_failure": {"at": "2026-12-06T16:00:00Z", "message": "the backup directory /var/backups/exhale does not exist"},
            },
        })),
        "banks.html" => chrome(json!({
            "nav": "settings",
            "errors": {"sync": "a", "target": "b", "relink": "c", "link": "d", "consent": "e", "application": "f"},
            "accounts": [{"id": 3, "name": "Checking", "currency": "USD"}],
            "countries": [{"code": "FI", "name": "Suomi / Finland"}, {"code": "SE", "name": "Sverige"}],
            "country": "FI", "banks": [{"name": "Nordea", "country": "FI", "consent_days": 90}],
            "connections": [{
                "id": 1, "provider": "simplefin", "name": "CON-1 Bank", "visibility": "private",
                "linked_by": {"id": 1, "name": "Ana"}, "status": "needs_relink",
                "problem": "The bank connection needs a person: link it again.",
                "last_success_at": "2026-11-29T10:00:00Z", "next_sync_at": "2026-11-29T16:00:00Z",
                "accounts": [
                    {"id": 1, "name": "Checking", "institution": "CON-1 Bank", "currency": "USD",
                     "account": {"id": 3, "name": "Checking"},
                     "balance": {"amount": "1520.07", "currency": "USD", "display": "$1,520.07"},
                     "balance_on": "2026-11-29"},
                    {"id": 2, "name": "Points", "problem": "The bank gives this account in a currency Exhale does not know."}
                ]
            }, {
                "id": 2, "provider": "enable_banking", "name": "Other", "visibility": "household",
                "linked_by": {"id": 2, "name": "Bo"}, "status": "ok", "country": "FI",
                "next_sync_at": "2026-11-29T16:00:00Z", "accounts": []
            }, {
                "id": 3, "provider": "enable_banking", "name": "Older", "visibility": "household",
                "linked_by": {"id": 2, "name": "Bo"}, "status": "ok",
                "next_sync_at": "2026-11-29T16:00:00Z", "accounts": []
            }],
        })),
        "reminders.html" => chrome(json!({
            "nav": "settings", "webhook_secret": "whsec_abc", "covers": ["mine", "household"],
            "digests": ["off", "monday"], "kinds": ["ntfy", "webhook", "email"], "securities": ["tls", "starttls", "none"],
            "errors": {"timing": "a", "destinations": "b", "destination": "c", "mail": "d", "telegram": "e", "bot": "f", "slack": "g", "slack_app": "h"},
            "feed_created": {"url": "http://127.0.0.1:8080/cal/abc.ics", "webcal": "webcal://127.0.0.1:8080/cal/abc.ics"},
            "chat_link": {"code": "abc123", "url": "https://t.me/exhale_bot?start=abc123", "expires_at": "2026-11-29T10:10:00Z"},
            "chat_link_kind": "telegram", "slack_manifest": "_metadata: {}",
            "reminders": {
                "days_before": [7, 1], "time_of_day": "09:00", "time_zone": "Europe/Madrid", "covers": "mine",
                "trial_endings": true, "card_expiry": true, "price_rises": false, "weekly_digest": "monday",
                "new_recurring": true,
                "destinations": [
                    {"id": 1, "kind": "ntfy", "name": "Phone", "address": "ntfy.sh/ana…", "reminders": true, "agent_changes": true,
                     "last_sent_at": "2026-11-29T09:00:00Z", "disabled": false},
                    {"id": 2, "kind": "webhook", "name": "HA", "address": "http://ha.local/…", "reminders": true, "agent_changes": false,
                     "last_error": "The webhook answered 500", "disabled": false},
                    {"id": 3, "kind": "webhook", "name": "Old", "address": "https://x/…", "reminders": false, "agent_changes": true,
                     "last_error": "410", "disabled": true},
                ],
                "upcoming": [{"due_at": "2026-12-02T08:00:00Z", "kind": "charge_upcoming", "subscription": {"id": 1, "name": "Gym"}, "destination": "Phone"},
                             {"due_at": "2026-12-07T08:00:00Z", "kind": "weekly_digest", "destination": "Phone"}],
                "calendar_feed": {"created_at": "2026-11-01T10:00:00Z", "show_amounts": false},
                "email_available": true,
                "telegram": {"username": "exhale_bot", "last_error": "Unauthorized", "webhook": true},
                "slack": {"username": "UBOT"},
                "mail_server": {"host": "smtp.example.net", "port": 587, "security": "starttls", "username": "ana", "password_saved": true, "from": "Exhale <e@example.net>"},
            },
        })),
        "settings.html" => chrome(json!({
            "nav": "settings", "me_id": 1,
            "household": {"name": "Home", "currency": "EUR", "time_zone": "Europe/Madrid", "language": "en"},
            "members": [{"id": 1, "name": "Ana", "email": "ana@a.test", "role": "owner", "active": true, "is_you": true, "language": "es"},
                        {"id": 2, "name": "Bob", "email": "bob@a.test", "role": "member", "active": false, "is_you": false, "language": null}],
            "languages": [["en", "English"], ["es", "Español"]],
            "settings": {"exchange_rates": {"USD": "0.92"}, "reminder_days_before": 3, "secrets": [],
                         "reminders": {"destinations": [{"id": 1}], "days_before": [3], "time_of_day": "09:00"}},
            "errors": {"household": "time_zone: unknown", "rates": "bad", "profile": "x", "password": "y", "invite": "z", "members": "w"},
            "invited": {"name": "Bob", "link": "http://127.0.0.1:8080/invite/abc", "expires_at": "2026-12-06T10:00:00Z"},
            "assistant": {"on": true, "provider": "ollama", "model": "qwen2.5:7b", "base_url": "http://127.0.0.1:11434/v1",
                          "api_key_saved": true, "local": true, "from_environment": ["model"],
                          "prices": [{"model": "qwen2.5:7b", "input": "0.10", "output": "0.40"}],
                          "this_month": {"questions": 3, "documents": 0, "calls": 7, "input_tokens": 9000, "output_tokens": 300,
                                         "cost_usd": "0.0012", "unpriced": 2}},
            "providers": [{"name": "ollama", "local": true, "default_base_url": "http://127.0.0.1:11434/v1"},
                          {"name": "openai_compatible", "local": true, "default_base_url": null}],
        })),
        "assistant.html" => {
            let card = |status: &str, destructive: bool| {
                json!({
                    "id": format!("cf_{status}"), "op": "delete_subscription", "title": "Delete a subscription",
                    "lines": ["Deleted Netflix"], "destructive": destructive, "status": status,
                    "expires_at": "2026-12-01T10:30:00Z", "said": "I'll delete it.",
                })
            };
            chrome(json!({
                "nav": "assistant", "on": true, "error": "Too many messages.",
                "turns": [{"question": "cancel netflix", "answer": "Tap Confirm."}],
                "cards": [card("pending", true), card("applied", false), card("discarded", false), card("undone", false)],
                "answer": {"text": "Tap Confirm.", "cards": [], "notice": "I stopped after 6 model calls.",
                           "screens": ["<section class=\"card screen\">drawn</section>"]},
            }))
        }
        "invitation.html" => {
            json!({"code": "abc", "name": "Bob", "form_token": "f", "error": "A password needs 10 to 256 characters."})
        }
        "organise.html" => chrome(json!({
            "nav": "organise", "error": "name: taken",
            "categories": [{"id": 1, "name": "Streaming", "emoji": "📺", "colour": "#000", "subscription_count": 2}],
            "payment_methods": [{"id": 2, "name": "Visa", "kind": "card", "last4": "4242", "expires": "2027-01", "subscription_count": 1,
                                 "owner": {"id": 1, "name": "Ana"}, "visibility": "household"}],
            "tags": [{"name": "family", "subscription_count": 2}],
        })),
        "message.html" => {
            chrome(json!({"title": "Not found", "message": "No subscription with id 9."}))
        }
        "consent.html" => chrome(json!({
            "client_name": "Claude", "redirect_host": "claude.ai", "loopback": false,
            "request_id": "exhreq_1", "requested": "write", "write_offered": true,
        })),
        "money.html" => {
            let period = json!({"first_day": "2026-11-01", "last_day": "2026-11-30", "allocated": amount("100.00"),
                "carried_over": amount("10.00"), "spent": amount("120.00"), "remaining": amount("-20.00")});
            chrome(json!({
                "nav": "money",
                "bank_connections": [{"id": 1, "name": "CON-1 Bank", "status": "ok", "last_success_at": "2026-11-29T10:00:00Z"},
                    {"id": 2, "name": "Other", "status": "try_later"}],
                "accounts": [{"id": 1, "name": "Joint", "kind": "credit_card", "currency": "EUR", "owner": {"id": 1, "name": "Ana"},
                              "visibility": "private", "archived": false, "balance": amount("-5.00"), "balance_on": "2026-11-29", "transaction_count": 3}],
                "budgets": [{"id": 1, "name": "Food", "period": "monthly", "start_day": 1, "starts_on": "2026-11-01", "rollover": true,
                             "catch_all": false, "current": period}],
                "cashflow": {"periods": [], "income": amount("1.00"), "expenses": amount("2.00"), "net": amount("-1.00")},
                "cashflow_chart": "<svg></svg>",
                "worth": {"points": [{"on": "2026-11-29", "total": amount("5.00"), "by_kind": []}], "accounts": []},
                "worth_chart": "<svg></svg>",
                "rules": [{"id": 1, "name": "Cafes", "payee_contains": "cafe", "description_contains": "card", "min_amount": "-50",
                           "max_amount": "-1", "account": {"id": 1, "name": "Joint"}, "set_category": {"id": 1, "name": "Food"},
                           "add_labels": [{"id": 1, "name": "holiday"}], "summary": "When payee contains “cafe”: adds the label holiday"},
                          {"id": 2, "name": "Rent", "payee_contains": "landlord", "set_category": {"id": 1, "name": "Food"},
                           "summary": "When payee contains “landlord”: sets the category Food"}],
                "categories": [{"id": 1, "name": "Food"}], "labels": [{"id": 1, "name": "holiday"}],
                "currency": "EUR", "kinds": ["checking", "credit_card"], "periods": ["weekly", "monthly"],
                "errors": {"create_budget": "amount is not a number", "record_balance": "not yet", "create_rule": "no action"},
            }))
        }
        "transactions.html" => chrome(json!({
            "nav": "transactions",
            "found": {"items": [{"id": 1, "on": "2026-11-20", "amount": amount("-54.30"), "account": {"id": 1, "name": "Joint"},
                                 "payee": "Market", "description": "MARKET 12", "labels": [{"id": 1, "name": "holiday"}], "transfer_id": 2,
                                 "source": "import", "splits": [{"amount": amount("-50.00"), "category": {"id": 1, "name": "Food"}}, {"amount": amount("-4.30")}]},
                                {"id": 2, "on": "2026-11-19", "amount": amount("5.00"), "account": {"id": 1, "name": "Joint"},
                                 "payee": "Refund", "category": {"id": 1, "name": "Food"}, "source": "manual"}],
                      "total": 1000, "total_is_lower_bound": true, "next_cursor": "2026-11-19.2.100"},
            "accounts": [{"id": 1, "name": "Joint"}], "categories": [{"id": 1, "name": "Food"}], "labels": [{"id": 1, "name": "holiday"}],
            "query": {"account": "1", "category": "none", "label": "", "from": "2026-11-01", "to": "", "q": "mar"},
            "kept": "account=1",
            "view": "account=1&cursor=2026-11-20.1.0",
            "ticked": [2],
            "errors": {"categorise_transactions": "choose one"},
        })),
        other => panic!("no fixture for {other}: add one"),
    }
}

#[test]
fn every_template_renders_with_fixture_data() {
    let templates = Templates::load().unwrap();
    // A name starting with "_" is a piece other templates include (their fixtures cover it).
    for name in Templates::names().filter(|name| !name.starts_with('_')) {
        let mut data = fixture(name);
        data["limits"] = json!(ops::limits::FORMS);
        let html = templates.render(name, &data).unwrap_or_else(|err| panic!("{err}"));
        assert!(html.starts_with("<!doctype html>"), "{name}");
        assert!(!html.contains("{{") && !html.contains("{%"), "{name}");
    }
}

#[test]
fn the_assistant_s_pieces_escape_what_they_draw() {
    let templates = Templates::load().unwrap();
    let mut data = fixture("assistant.html");
    data["cards"][0]["lines"] = json!(["Deleted <img src=x onerror=alert(1)>"]);
    let html = templates.render("assistant.html", &data).unwrap();
    assert!(html.contains("Deleted &lt;img"), "{html}");
    let screen = json!({"kind": "subscriptions", "items": [{"id": 1, "name": "<script>x</script>", "price": amount("1.00"),
        "cycle": "monthly", "status": "active", "owner": "Ana", "visibility": "household"}]});
    let html = templates.render("_screen.html", &json!({"screen": screen, "chart": ""})).unwrap();
    assert!(html.contains("&lt;script&gt;") && !html.contains("<script>"), "{html}");
}

#[test]
fn settings_render_with_the_assistant_off() {
    let templates = Templates::load().unwrap();
    let mut data = fixture("settings.html");
    data["limits"] = json!(ops::limits::FORMS);
    data["assistant"] = json!({"on": false, "api_key_saved": false, "local": false, "from_environment": [], "prices": [],
        "this_month": {"questions": 0, "documents": 0, "calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": "0.00", "unpriced": 0}});
    let html = templates.render("settings.html", &data).unwrap_or_else(|err| panic!("{err:#}"));
    assert!(html.contains("Off: nothing is sent anywhere."));
}

#[test]
fn the_scripts_sentences_are_json_data_that_cannot_close_their_element() {
    let templates = Templates::load().unwrap();
    let html = templates.render("settings.html", &fixture("settings.html")).unwrap();
    let (_, rest) =
        html.split_once(r#"<script type="application/json" id="script-words">"#).unwrap();
    let (words, _) = rest.split_once("</script>").unwrap();
    let words: serde_json::Map<String, serde_json::Value> = serde_json::from_str(words).unwrap();
    assert_eq!(words["Updated just now."], "Updated just now.");
    // Every sentence app.js says is one base.html hands it.
    let script = include_str!("../../static/app.js");
    let said = said_by_the_script(script);
    assert!(!said.is_empty());
    for sentence in said {
        assert!(
            words.contains_key(&sentence),
            "app.js says {sentence:?}, which base.html does not hand it"
        );
    }
}

/// The sentences app.js passes to `said("...")`.
fn said_by_the_script(script: &str) -> Vec<String> {
    script
        .split("said(\"")
        .skip(1)
        .filter_map(|rest| rest.split_once('"').map(|(sentence, _)| sentence.to_owned()))
        .collect()
}

#[test]
fn a_client_name_on_the_consent_page_is_escaped() {
    let templates = Templates::load().unwrap();
    let mut data = fixture("consent.html");
    data["client_name"] = json!("<img src=x onerror=alert(1)>");
    let html = templates.render("consent.html", &data).unwrap();
    assert!(!html.contains("<img src=x") && html.contains("&lt;img src=x"), "{html}");
}

#[test]
fn text_from_data_is_escaped() {
    let templates = Templates::load().unwrap();
    let mut data = fixture("subscriptions.html");
    data["list"]["items"][0]["name"] = json!("<script>alert(1)</script>");
    let html = templates.render("subscriptions.html", &data).unwrap();
    assert!(!html.contains("<script>alert(1)") && html.contains("&lt;script&gt;"), "{html}");
}

#[test]
fn reminders_render_for_a_member_with_nothing_set_up() {
    let templates = Templates::load().unwrap();
    let mut data = fixture("reminders.html");
    data.as_object_mut().unwrap().remove("errors");
    data.as_object_mut().unwrap().remove("feed_created");
    data["may"] = super::may(&person(ops::Role::Member));
    data["reminders"] = json!({
        "days_before": [3], "time_of_day": "09:00", "time_zone": "Europe/Madrid", "covers": "mine",
        "trial_endings": true, "card_expiry": true, "price_rises": true, "weekly_digest": "off",
        "destinations": [], "upcoming": [], "email_available": false,
    });
    let html = templates.render("reminders.html", &data).unwrap_or_else(|err| panic!("{err:#}"));
    assert!(html.contains("Nowhere yet") && !html.contains("Mail server"), "{html}");
}
