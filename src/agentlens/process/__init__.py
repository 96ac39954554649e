"""Process scoring against multi-run references (arXiv 2605.12925): labeler, PTA, signals, cohort."""
