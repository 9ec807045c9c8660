"""The parsers' shared path helpers on the cases the other tests leave open (mutmut's survivors)."""

from __future__ import annotations

from pm_agent.gates.findings._common import Ctx, norm_root


def test_norm_root_strips_only_trailing_slashes() -> None:
    # a directory whose name ends in a letter the slash is stripped next to stays whole
    assert norm_root("/srv/X//") == "/srv/X/"
    assert norm_root("/srv/XX") == "/srv/XX/"
    assert Ctx(tool="t", root=norm_root("/srv/X")).path("/srv/X/a.py") == "a.py"
