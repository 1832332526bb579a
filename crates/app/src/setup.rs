//! Creating a household with its first owner: the one write with no caller yet, used by
//! `exhale member create-owner` and the web's first-run page.

use domain::{Text, entities::Role};
use ops::{Caller, OpError, Via, accounts::NewHousehold};

use crate::{App, clock, credentials, input, transactions};

impl App {
    /// Keeps a setup link `exhale serve` prints while nobody has an account (its hash), so
    /// the link opens the setup page on any instance on the database.
    pub async fn open_setup_link(&self, secret: &str) -> Result<(), OpError> {
        let hash = credentials::hash_token(secret);
        let store = self.store.clone();
        let now = clock::timestamp_text(self.clock.now());
        transactions::blocking_write(store, move |db| {
            store::access::insert_setup_link(db, &hash, &now).map_err(transactions::internal)
        })
        .await
    }

    /// Creates a household, seeds its default categories, and creates its owner. Returns the
    /// owner as a person caller.
    pub async fn create_household(&self, new: NewHousehold) -> Result<Caller, OpError> {
        self.insert_household(new, false).await
    }

    /// [`App::create_household`] for the web's first-run page: refused once anyone has an
    /// account, checked in the same transaction.
    pub(crate) async fn create_first_household(
        &self,
        new: NewHousehold,
    ) -> Result<Caller, OpError> {
        self.insert_household(new, true).await
    }

    async fn insert_household(
        &self,
        new: NewHousehold,
        first_only: bool,
    ) -> Result<Caller, OpError> {
        let household_name =
            input::clean_name("/household_name", &new.household_name, ops::limits::NAME)?;
        let currency = input::parse_currency("/currency", &new.currency)?;
        let time_zone = input::check_time_zone("/time_zone", &new.time_zone)?;
        let language = input::check_language("/language", &new.language)?;
        let owner_name = input::clean_name("/owner_name", &new.owner_name, ops::limits::NAME)?;
        let email = credentials::clean_email("/email", &new.email)?;
        credentials::check_password("/password", &new.password)?;
        let password = new.password;
        let hash =
            credentials::password_work(move || credentials::hash_password(&password)).await??;
        let store = self.store.clone();
        let now = clock::timestamp_text(self.clock.now());
        let (household_id, member_id) = transactions::blocking_write(store, move |db| {
            if first_only && store::households::any_member(db).map_err(transactions::internal)? {
                return Err(OpError::forbidden(Text::new(
                    "Exhale is already set up; sign in instead.",
                )));
            }
            // Someone has an account from now on: no setup link opens anything.
            store::access::delete_setup_links(db).map_err(transactions::internal)?;
            if store::households::email_taken(db, &email).map_err(transactions::internal)? {
                return Err(OpError::invalid(
                    "/email",
                    Text::new("Someone with this email already has an Exhale account."),
                ));
            }
            let household_id = store::households::insert_household(
                db,
                &household_name,
                currency,
                &time_zone,
                &language,
                &now,
            )
            .map_err(transactions::internal)?;
            for category in domain::categories::DEFAULT_CATEGORIES {
                store::organise::insert_category(
                    db,
                    household_id,
                    category.name,
                    category.emoji,
                    category.colour,
                    &now,
                )
                .map_err(transactions::internal)?;
            }
            let member_id = store::households::insert_member(
                db,
                &store::households::NewMember {
                    household_id,
                    name: &owner_name,
                    email: &email,
                    role: Role::Owner,
                    // The owner reads the household's language until they choose one.
                    language: "",
                    password_hash: Some(&hash),
                    invite_hash: None,
                    invite_expires_at: None,
                },
                &now,
            )
            .map_err(transactions::internal)?;
            Ok((household_id, member_id))
        })
        .await?;
        Ok(Caller::person(household_id, member_id, Role::Owner, Via::Cli))
    }

    /// Whether any member exists (so `serve` can explain how to create the first owner).
    pub async fn has_members(&self) -> Result<bool, OpError> {
        let store = self.store.clone();
        transactions::blocking(move || {
            crate::transactions::read(&store, |db| {
                store::households::any_member(db).map_err(transactions::internal)
            })
        })
        .await
    }
}

impl App {
    /// The instance's only owner, for CLI commands run without `--as`.
    pub async fn sole_owner(&self, via: Via) -> Result<Caller, OpError> {
        let store = self.store.clone();
        let owners = transactions::blocking(move || {
            transactions::read(&store, |db| {
                store::households::owners(db).map_err(transactions::internal)
            })
        })
        .await?;
        match owners.as_slice() {
            [owner] => Ok(Caller::person(owner.household_id, owner.id, owner.role, via)),
            [] => Err(OpError::not_found(Text::new(
                "There is no owner yet. Run `exhale member create-owner` first.",
            ))),
            _ => Err(OpError::invalid(
                "/as",
                Text::new("There are several owners; say who you are with --as EMAIL."),
            )),
        }
    }
}
