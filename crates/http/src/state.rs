//! `AppState`: the state every HTTP adapter's router runs with.

use std::sync::Arc;

/// What handlers get through axum's `State`: the catalog, and nothing that bypasses it.
#[derive(Clone)]
pub struct AppState {
    pub catalog: Arc<dyn ops::Catalog>,
}

impl AppState {
    pub fn new(catalog: Arc<dyn ops::Catalog>) -> Self {
        Self { catalog }
    }
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The catalog is a trait object without `Debug`; its op count is enough to recognise it.
        f.debug_struct("AppState").field("ops", &self.catalog.ops().len()).finish()
    }
}
