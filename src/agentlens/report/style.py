"""The report's inline style sheet and its palette (the SVG plots use the same colours)."""

from __future__ import annotations

OUTCOME_COLORS = {"passed": "#2f8f5b", "failed": "#c8473d", "unknown": "#9aa0a6"}
TIER_COLORS = {
    "ideal": "#1f7a4d",
    "solid": "#5fae7e",
    "lucky": "#e0a030",
    "partial_fail": "#e07b39",
    "off_track": "#c8473d",
    "none": "#9aa0a6",
}
ACCENT = "#3b6fb6"
MUTED = "#6b7280"
GRID = "#e5e7eb"

_TIER_RULES = "".join(
    f".tier-{name}{{background:{color}1f;color:{color}}}" for name, color in TIER_COLORS.items()
)

CSS = (
    """
*{box-sizing:border-box}
body{margin:0;background:#f6f7f9;color:#1f2933;
 font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1240px;margin:0 auto;padding:28px 32px 64px}
header h1{margin:0;font-size:26px;letter-spacing:-.01em}
.subtitle{margin:4px 0 20px;color:#6b7280}
h2{font-size:20px;margin:0 0 12px;padding-bottom:6px;border-bottom:1px solid #e5e7eb}
h3{font-size:15px;margin:22px 0 8px;color:#374151}
section.run,nav,section.overview{background:#fff;border:1px solid #e5e7eb;border-radius:10px;
 padding:20px 24px;margin:0 0 22px;box-shadow:0 1px 2px rgba(0,0,0,.04)}
nav ol{margin:0;padding-left:22px;columns:2}
a{color:#3b6fb6;text-decoration:none}a:hover{text-decoration:underline}
.kind{display:inline-block;font-size:11px;text-transform:uppercase;letter-spacing:.06em;
 padding:1px 7px;border-radius:9px;background:#e8eef8;color:#3b6fb6;margin-right:8px;
 vertical-align:middle}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:0 0 8px;font-size:13px}
dt{color:#6b7280}dd{margin:0;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;
 word-break:break-all}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(118px,1fr));gap:10px;
 margin:14px 0 10px}
.cards>div{background:#f9fafb;border:1px solid #eceef1;border-radius:8px;padding:9px 13px}
.cards .value{font-size:22px;font-weight:600;font-variant-numeric:tabular-nums}
.cards .label{font-size:12px;color:#6b7280}
.cards .tier-card{border-left:4px solid currentColor}.tier-card .value{font-size:18px}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:8px 28px}
figure{margin:8px 0}figcaption{font-size:12px;color:#6b7280;margin-top:2px}
svg{max-width:100%;height:auto;font-family:inherit}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:13px;margin:4px 0 10px;min-width:40%}
caption{text-align:left;color:#6b7280;font-size:12px;padding-bottom:4px}
th{text-align:left;font-weight:600;color:#374151;background:#f3f4f6;padding:5px 10px;
 border-bottom:1px solid #e5e7eb;white-space:nowrap}
td{padding:4px 10px;border-bottom:1px solid #f0f1f3;vertical-align:top}
tbody tr:nth-child(even){background:#fafbfc}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td[title]{cursor:help;text-decoration:underline dotted #b0b6bf}
td[class*=tier-]{border-radius:4px}
table.runs td{white-space:nowrap}
table.runs td:first-child{white-space:normal;word-break:break-all;min-width:260px;
 font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}
.pos{color:#1f7a4d}.neg{color:#c8473d}
details{margin:10px 0}summary{cursor:pointer;font-weight:600;color:#374151;margin-bottom:6px}
.note{color:#6b7280;font-size:13px}
.note.in-sample-note{color:#92400e;background:#fef3c7;padding:6px 10px;border-radius:4px}
td.in-sample{color:#92400e;background:#fef3c7}
"""
    + _TIER_RULES
)
