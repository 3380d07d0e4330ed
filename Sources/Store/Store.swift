// Store: see DESIGN.md. Filled in by its issue.
