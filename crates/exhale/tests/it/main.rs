//! The one integration test binary: the real app on real SQLite files, driven through the
//! catalog, the REST API on 127.0.0.1:0 with an HTTP client, and the `exhale` binary itself.

#![expect(clippy::unwrap_used, reason = "tests fail by panicking, with the value in the message")]

mod architecture;
mod assistant;
mod backups;
mod bank_sync;
mod banks;
mod browser;
mod budgets;
mod catalog;
mod channels;
mod cli;
mod conformance;
mod contracts;
mod database_tls;
mod fixtures;
mod hostile_files;
mod household_references;
mod import;
mod inspector;
mod install;
mod isolation;
mod ledger;
mod ledger_reports;
mod ledger_rules;
mod mcp;
mod mcp_apps;
mod migrate;
mod names_and_dates;
mod oauth;
mod oauth_documents;
mod policy;
mod rest;
mod row_security;
mod rules;
mod schemathesis;
mod serving;
mod several_instances;
mod slack;
mod telegram;
mod tool_sets;
mod translations;
mod validation;
mod web;
mod web_money;
mod write_turns;
