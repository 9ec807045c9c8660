"""The GitHub bridge (seed 003): tasks as issues, escalations as comments, answers back, a pull request at release."""
