"""The `verify-reducer` command (docs/design.md §15): its flags (parser), its commands and
exit codes (commands), several programs in one run (batch), `compare` (compare), the human report
(text, report, output), the JSON documents (json_doc), the pictures (svg) and the HTML
report (html, templates/)."""
