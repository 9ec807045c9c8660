"""The words plans use for fields: labels (English, Chinese, and a few of other languages) and the kinds of a Files
entry."""

from __future__ import annotations

# Label as written (lowercased, without ':' and extra spaces) -> field name.
LABELS: dict[str, str] = {
    "files": "files",
    "file": "files",  # `**File:** \`app/loading.tsx\` (create)`: a task of one file
    "depends on": "depends_on",
    "depends": "depends_on",
    "blocked by": "depends_on",
    "wait for": "depends_on",
    "wait_for": "depends_on",  # `**WAIT_FOR:** Task A` (wave plans)
    # Read as `Depends on` when they name tasks; these also name packages, tools and accounts (`Requires: Python
    # 3.11`), which stay prose with a warning (task_body.py).
    "dependencies": "requires",
    "dependency": "requires",
    "prerequisites": "requires",
    "prerequisite": "requires",
    "prereqs": "requires",
    "prereq": "requires",
    "requires": "requires",
    # `**Blocks:** Task 5` on Task 4: Task 5 depends on Task 4 (deps.add_blocked).
    "blocks": "blocks",
    "blocking": "blocks",
    "unblocks": "blocks",
    # superpowers' `**Interfaces:**` list: `- Consumes: ... (Task 1)` names what the task needs; `Produces:` adds none.
    "consumes": "consumes",
    "tier": "tier",
    "risk tier": "tier",
    "ownership": "ownership",
    "owner": "ownership",
    "module": "ownership",
    "estimate": "estimate",
    "size": "estimate",
    "acceptance criteria": "acceptance_criteria",
    "acceptance": "acceptance_criteria",
    "non-goals": "non_goals",
    "non goals": "non_goals",
    "nongoals": "non_goals",
    "out of scope": "non_goals",
    "tests to add": "tests_to_add",
    "tests to run": "tests_to_run",
    "steps": "steps",
    "goal": "goal",
    "architecture": "architecture",
    "tech stack": "tech_stack",
    "stack": "tech_stack",
    # Chinese plans (`**文件：**`, `**依赖：** 任务 1`); `负责人` names a person or agent, not a module.
    "文件": "files",
    "依赖": "depends_on",
    "前置依赖": "depends_on",
    "依赖于": "depends_on",
    "层级": "tier",
    "风险等级": "tier",
    "模块": "ownership",
    "预计时间": "estimate",
    "预估时间": "estimate",
    "工作量": "estimate",
    "验收标准": "acceptance_criteria",
    "验收": "acceptance_criteria",
    "非目标": "non_goals",
    "不在范围内": "non_goals",
    "步骤": "steps",
    "实施步骤": "steps",
    # Japanese and Czech plans (`### タスク 1:` with `**ファイル:**`; `### Úkol 1:` with `**Soubory:**`).
    "ファイル": "files",
    "soubory": "files",
}

# Fields whose values are lists that may follow the label on the next lines.
LIST_FIELDS = frozenset(
    {
        "files",
        "depends_on",
        "requires",
        "blocks",
        "acceptance_criteria",
        "non_goals",
        "tests_to_add",
        "tests_to_run",
        "steps",
    }
)

# `Create:` / `Modify:` ... in a Files list -> ExpectedFiles attribute.
FILE_KINDS: dict[str, str] = {
    "create": "create",
    "new": "create",
    "add": "create",
    "modify": "modify",
    "update": "modify",
    "edit": "modify",
    "change": "modify",
    "delete": "delete",
    "remove": "delete",
    "test": "test",
    "tests": "test",
    "创建": "create",
    "新建": "create",
    "修改": "modify",
    "删除": "delete",
    "测试": "test",
    "作成": "create",
    "変更": "modify",
    "vytvořit": "create",
    "upravit": "modify",
}
