//! The built-in assistant, an adapter over the catalog like MCP: people ask in plain words and a
//! model answers with the catalog's tools.
//!
//! This first part holds the provider clients (`llm`): a provider-neutral message model, an SSE
//! reader, and one thin client per protocol (OpenAI-compatible chat completions; the Anthropic
//! Messages API), streaming, with one retry before the first byte. The tool loop over the
//! catalog, proposals confirmed by cards, usage and cost, and reading statements build on it.

pub mod llm;
