//! On PostgreSQL a household's changes take turns among themselves, beside other households'
//! changes; a dry run, which gives back the ids it took, waits for every write. Through the
//! real binary, while the test holds one household's change under way (`during_a_write_of`,
//! the same turn Exhale's own change takes). These run on PostgreSQL in both passes.

use serde_json::json;
use test_support::DataDir;

use crate::{cli::exhale, row_security::two_households};

#[test]
fn a_households_change_goes_on_beside_anothers_and_waits_for_its_own() {
    let dir = DataDir::postgres();
    two_households(&dir);
    let category = |member: &str, name: &str, dry_run: bool| {
        let input = json!({"name": name}).to_string();
        let mut args = vec!["op", "create_category", "--as", member, "--json", &input];
        if dry_run {
            args.push("--dry-run");
        }
        exhale(&dir, &args, "")
    };
    // Cai's household (the second) has a change under way.
    dir.during_a_write_of(2, || {
        let beside = category("ana@a.test", "Gifts", false);
        assert!(beside.status.success(), "{}", String::from_utf8_lossy(&beside.stderr));
        let behind = category("cai@b.test", "Gifts", false);
        let said = String::from_utf8_lossy(&behind.stderr);
        assert!(!behind.status.success() && said.contains("busy"), "{said}");
        let preview = category("ana@a.test", "Books", true);
        let said = String::from_utf8_lossy(&preview.stderr);
        assert!(!preview.status.success() && said.contains("busy"), "{said}");
    });
    // Once it ends, both go through.
    for (member, name) in [("cai@b.test", "Gifts"), ("ana@a.test", "Books")] {
        let done = category(member, name, false);
        assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stderr));
    }
}
