//! Which finding page is about which scenarios and seed files: the one typed mapping
//! behind `findings --write-docs`. Everything else about a seed (its seed, bugs,
//! candidate fixes) comes from the seed file itself.

/// One page of `docs/findings/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Page {
    /// File name in `docs/findings/`: `NN-<slug>.md`, NN in the README table's order.
    pub file: &'static str,
    /// Finding scenarios (`scenarios/findings/`, as seed files name them) this page is
    /// about: every seed file of them belongs to the page, and each is measured.
    pub scenarios: &'static [&'static str],
    /// Seed files of standard scenarios (shared with other findings) that belong here.
    pub seed_files: &'static [&'static str],
    /// Why the timeline is of the run as recorded, not shrunk: `shrink` keeps only the
    /// outcome and the first invariant, and for some liveness findings the smallest run
    /// that keeps them is another hang. `None`: the timeline is of the shrunk run.
    pub no_shrink: Option<&'static str>,
}

pub const PAGES: &[Page] = &[
    Page {
        file: "01-status-watermark-snapshot.md",
        scenarios: &[
            "scenarios/findings/status_watermark_snapshot.toml",
            "scenarios/findings/status_watermark_snapshot_moves.toml",
            "scenarios/findings/status_watermark_snapshot_crash.toml",
        ],
        seed_files: &[],
        no_shrink: None,
    },
    Page {
        file: "02-restored-remove-checkpoint.md",
        scenarios: &[
            "scenarios/findings/restored_remove_before_bootstrap.toml",
            "scenarios/findings/restored_remove_stop_report_window.toml",
            "scenarios/findings/restored_remove_lost_stop_report.toml",
        ],
        seed_files: &[
            "move_maintainer_with_delayed_messages-nobug-390.json",
            "redo_trigger_takeover_with_delayed_messages-nobug-863.json",
            "maintainer_takeover_races-nobug-535.json",
            "redo_move_maintainer_with_delayed_messages-nobug-615.json",
            "redo_move_maintainer_with_delayed_messages-nobug-744.json",
            "redo_move_maintainer_with_delayed_messages-nobug-964.json",
        ],
        no_shrink: None,
    },
    Page {
        file: "03-zombie-closing-dispatcher-manager.md",
        scenarios: &["scenarios/findings/zombie_closing_dispatcher_manager.toml"],
        seed_files: &[
            "swarm-nobug-697.json",
            "swarm-nobug-133.json",
            "swarm-nobug-61.json",
            "swarm_slow_bootstrap-nobug-657.json",
            "swarm-nobug-234.json",
            "swarm-nobug-279.json",
            "swarm-nobug-522.json",
            "swarm-nobug-784.json",
            "swarm-nobug-908.json",
            "swarm-nobug-955.json",
            "swarm-nobug-40.json",
            "swarm-nobug-61-redrawn.json",
            "swarm-nobug-223.json",
            "swarm-nobug-365.json",
            "swarm-nobug-457.json",
            "swarm-nobug-588.json",
            "swarm-nobug-692.json",
            "swarm-nobug-750.json",
            "swarm-nobug-784-redrawn.json",
            "swarm-nobug-839.json",
            "swarm-nobug-972.json",
            "swarm-nobug-134.json",
            "swarm-nobug-291.json",
            "swarm-nobug-353.json",
            "swarm-nobug-458.json",
            "swarm-nobug-472.json",
            "swarm-nobug-640.json",
            "swarm-nobug-904.json",
            "swarm-nobug-35.json",
            "swarm-nobug-742.json",
            "swarm-nobug-360.json",
        ],
        no_shrink: Some(
            "its smallest `converges` failure restarts the maintainer's capture before a maintainer exists, which is another hang",
        ),
    },
    Page {
        file: "04-move-maintainer-during-create-table.md",
        scenarios: &["scenarios/findings/move_maintainer_during_create_table.toml"],
        seed_files: &[
            "swarm_slow_bootstrap-nobug-630.json",
            "swarm_slow_bootstrap-nobug-132.json",
            "swarm_slow_bootstrap-nobug-190.json",
            "swarm-nobug-83.json",
            "swarm-nobug-185.json",
            "swarm-nobug-524.json",
            "swarm-nobug-624.json",
            "swarm_slow_bootstrap-nobug-767.json",
            "swarm_slow_bootstrap-nobug-269.json",
            "swarm_slow_bootstrap-nobug-661.json",
            "swarm_slow_bootstrap-nobug-807.json",
            "swarm_slow_bootstrap-nobug-949.json",
            "swarm-nobug-207.json",
            "swarm_slow_bootstrap-nobug-132-redrawn.json",
            "swarm_slow_bootstrap-nobug-190-redrawn.json",
            "swarm_slow_bootstrap-nobug-661-redrawn.json",
            "swarm_slow_bootstrap-nobug-807-redrawn.json",
            "swarm_slow_bootstrap-nobug-36.json",
            "swarm_slow_bootstrap-nobug-91.json",
            "swarm_slow_bootstrap-nobug-163.json",
            "swarm_slow_bootstrap-nobug-293.json",
            "swarm-nobug-267.json",
        ],
        no_shrink: None,
    },
    Page {
        file: "05-ddl-at-syncpoint-ts.md",
        scenarios: &["scenarios/findings/ddl_at_syncpoint_ts.toml"],
        seed_files: &[],
        no_shrink: None,
    },
    Page {
        file: "06-outdated-done-block-state.md",
        scenarios: &["scenarios/findings/outdated_done_block_state.toml"],
        seed_files: &["swarm-nobug-280.json"],
        no_shrink: None,
    },
    Page {
        file: "07-move-finished-after-dest-removed.md",
        scenarios: &["scenarios/findings/move_finished_after_dest_removed.toml"],
        seed_files: &["swarm-nobug-564.json", "swarm-nobug-564-redrawn.json"],
        no_shrink: None,
    },
    Page {
        file: "08-stale-bootstrap-resend-recreates-trigger.md",
        scenarios: &[
            "scenarios/findings/stale_bootstrap_resend_recreates_trigger.toml",
            "scenarios/findings/redo_stale_bootstrap_resend_recreates_trigger.toml",
        ],
        seed_files: &[],
        no_shrink: None,
    },
    Page {
        file: "09-table-set-ddl-lost-on-failover.md",
        scenarios: &[
            "scenarios/findings/table_set_ddl_lost_on_failover.toml",
            "scenarios/findings/partition_table.toml",
            "scenarios/findings/ddl_mix_with_random_move_table.toml",
        ],
        seed_files: &[
            "swarm-nobug-168.json",
            "swarm-nobug-225.json",
            "swarm-nobug-754.json",
            "swarm-nobug-13.json",
            "swarm-nobug-45.json",
            "swarm-nobug-175.json",
            "swarm-nobug-846-redrawn.json",
            "swarm-nobug-121.json",
            "swarm-nobug-343.json",
            "swarm-nobug-460.json",
            "swarm-nobug-547.json",
            "swarm-nobug-610.json",
            "swarm-nobug-683.json",
            "swarm-nobug-818.json",
            "swarm-nobug-875.json",
            "swarm-nobug-262.json",
            "swarm-nobug-789.json",
            "swarm-nobug-905.json",
            "swarm-nobug-935.json",
            "swarm-nobug-171.json",
            "swarm-nobug-174.json",
            "swarm-nobug-269.json",
            "swarm-nobug-303.json",
            "swarm-nobug-652.json",
            "swarm-nobug-818-role-loops.json",
        ],
        no_shrink: None,
    },
    Page {
        file: "10-rename-hides-db-ddl.md",
        scenarios: &[],
        seed_files: &[
            "swarm-nobug-295.json",
            "swarm-nobug-725.json",
            "swarm-nobug-851.json",
        ],
        no_shrink: None,
    },
    Page {
        file: "11-restored-move-hides-new-split-table.md",
        scenarios: &["scenarios/findings/restored_move_new_split_table.toml"],
        seed_files: &["swarm-nobug-6041.json"],
        no_shrink: None,
    },
    Page {
        file: "12-lost-bootstrap-error.md",
        scenarios: &[],
        seed_files: &["swarm-nobug-391.json", "swarm-nobug-923.json"],
        no_shrink: None,
    },
    Page {
        file: "13-rebuilt-writing-event-finished.md",
        scenarios: &["scenarios/findings/rebuilt_writing_event_finished.toml"],
        seed_files: &["swarm_slow_bootstrap-nobug-515.json"],
        no_shrink: Some(
            "its smallest `converges` failure never kills the maintainer and never disables the failpoint, so the write is held for good, which is another hang",
        ),
    },
];

/// Seed files of `seeds/findings/` without a finding page (`seeds/findings/README.md`):
/// not yet walked, or walked to a model defect. Empty: every file has its page.
pub const UNCLASSIFIED: &[&str] = &[];

impl Page {
    /// `01-status-watermark-snapshot` without `.md`.
    pub fn stem(&self) -> &'static str {
        self.file.strip_suffix(".md").unwrap_or(self.file)
    }

    /// The slug without its number: `status-watermark-snapshot`.
    pub fn slug(&self) -> &'static str {
        self.stem().split_once('-').map(|(_, s)| s).unwrap_or(self.stem())
    }

    /// Whether the seed file (its name and scenario) belongs to this page.
    pub fn owns(&self, file: &str, scenario: &str) -> bool {
        self.scenarios.contains(&scenario) || self.seed_files.contains(&file)
    }
}

/// A page by file name, stem, slug or number (`03`).
pub fn find(name: &str) -> Option<&'static Page> {
    let name = name.strip_suffix(".md").unwrap_or(name);
    PAGES.iter().find(|p| p.stem() == name || p.slug() == name || p.stem().split('-').next() == Some(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_numbered_in_order_and_found_by_any_name() {
        for (i, p) in PAGES.iter().enumerate() {
            assert!(p.file.starts_with(&format!("{:02}-", i + 1)), "{}", p.file);
            assert_eq!(find(p.file), Some(p));
            assert_eq!(find(p.slug()), Some(p));
            assert_eq!(find(&format!("{:02}", i + 1)), Some(p));
        }
        assert_eq!(find("no-such-page"), None);
        assert_eq!(find("14"), None);
    }

    /// Every seed file of seeds/findings/ has exactly one page, or is listed unclassified.
    #[test]
    fn every_findings_seed_file_has_one_home() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../seeds/findings");
        for path in crate::seedfile::collect(&dir).unwrap() {
            let f = crate::seedfile::SeedFile::load(&path).unwrap();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let homes = PAGES.iter().filter(|p| p.owns(&name, &f.scenario)).count();
            let unclassified = UNCLASSIFIED.contains(&name.as_str());
            assert_eq!(
                homes + usize::from(unclassified),
                1,
                "{}: {} pages, unclassified {}",
                name,
                homes,
                unclassified
            );
        }
    }
}
