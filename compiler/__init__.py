"""profilec: compile daemon-owned credential roots into Codex permission profiles."""
