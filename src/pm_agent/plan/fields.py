"""Reading field values written by people: labels, task ids and references, file entries, tiers."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import PurePosixPath

# The label tables live in labels.py; read through this module too (`fields.LIST_FIELDS`).
from pm_agent.plan import fastpath
from pm_agent.plan.labels import FILE_KINDS as FILE_KINDS
from pm_agent.plan.labels import LABELS as LABELS
from pm_agent.plan.labels import LIST_FIELDS as LIST_FIELDS
from pm_agent.plan.models import ExpectedFiles, Tier

# Full-width punctuation of CJK plans read as its ASCII twin in labels and field values.
FULL_WIDTH = str.maketrans({"：": ":", "（": "(", "）": ")", "，": ",", "；": ";", "、": ","})
# `Step 3: Title`, `Step 3a. Title`, `Step 1.2: Title` (a batch's steps), `步骤 1：Title`, `Krok 1: Title` (Czech).
_STEP = re.compile(
    r"^(?:step\s+|krok\s+|步骤\s*)(?P<n>[0-9]+(?:\.[0-9]+)*[a-z]?)\s*(?:[:：.)\-–—]\s*(?P<title>.*))?$", re.IGNORECASE
)
# The word that starts a task heading: English, Chinese, Japanese and Korean (no space needed before the
# number), Czech, German, Spanish, French, Portuguese, Italian, Polish, Russian, Dutch.
_TASK_WORD = r"(?:task|úkol|aufgabe|tarea|tâche|tarefa|compito|zadanie|задача|taak)\s+|(?:任务|タスク|작업)\s*"
# A checkbox before it, as Trae writes its plans: `### [ ] Task 1: Title`, `### [x] Task 3: Title` (done),
# `### - [ ] Task 4: Title`; `[~]` and `[-]` are under way, still to do (as in checklist.py).
_HEADING_BOX = r"(?:[-*+]\s+)?\[[ xX~-]\]\s*"
# `Task 3: Title`, `Task 3a：Title`, `Task 12 — Title`, `Task 4. Title`, `任务 1：Title`, `Task A: Title`; the id
# must hold a digit or be one capital letter, so a heading such as `Task ownership: who does what` is not a task.
# A range of tasks in one section, `Task 3-6: Title`, is one task `3-6`; written with an en or em dash, a wave
# dash or ` to ` it is the same task (no spaces around a dash: `Task 3 – 6 files` is task 3, as it always was).
# Words that open a bracket saying when a task runs, at the end of its title or before it (`Task 3 (after Task 2):
# Title`): refs.title_deps reads them.
TITLE_PAREN_WORDS = (
    r"after|depends?\s+on|requires?|blocked\s+by|needs|waits?\s+for|only\s+(?:if|when)|unless|if|optional"
)
_TASK_HEADING = re.compile(
    rf"^(?:{_HEADING_BOX})?(?:{_TASK_WORD})"
    r"(?P<id>(?-i:[A-Z])(?=\s*[:：]|\s+[-–—]+\s|\.\s)|(?=[A-Za-z0-9._-]*\d)[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)"
    r"(?:(?:[–—]|\s*[〜～]\s*|\s+to\s+)(?P<high>\d+(?:\.\d+)*[a-z]?))?"
    rf"(?:\s*[(（](?P<when>(?:{TITLE_PAREN_WORDS})\b[^()（）]*)[)）])?"
    r"(?:\s*[:：]\s*|\s+[-–—]+\s+|\.\s+)(?P<title>\S.*)$",
    re.IGNORECASE,
)
# A checked box before a task heading: the plan says the task is done.
_CHECKED = re.compile(r"^(?:[-*+]\s+)?\[[xX]\]")
_WORDS_UNSPACED = frozenset(("任务", "タスク", "작업"))  # a number may follow them without a space
# What starts like a task heading (a task word and a number) whether or not it is one, for the warning about
# the ones that are not (`## Task 104 global loop`: no separator after the number).
_TASK_START = re.compile(
    rf"^(?:{_HEADING_BOX})?(?P<word>task|úkol|aufgabe|tarea|tâche|tarefa|compito|zadanie|задача|taak|任务|タスク|작업)"
    r"(?P<space>\s*)(?P<id>\d[A-Za-z0-9._-]*)(?P<rest>.*)$",
    re.IGNORECASE,
)
# No quotes, spaces, range or full-width colon; no `/` or `./` first, no `//` or `/./`, no `/.,;` last.
_PLAIN_PATH = re.compile(r"(?!\.?/)(?!.*/\.?/)[^\s:：'\"`]*[^\s:：'\"`/.,;]")
_SPAN = r"\d+(?:\s*[-–]\s*\d+)?"
_RANGE = re.compile(rf"^(?P<path>.+?):(?P<range>{_SPAN}(?:\s*,\s*{_SPAN})*)$")  # `a.py:12-40`, `a.py:94,100`
# Between two paths of one entry only separators may stand (`a.py`, `b.py` and `c.py`); prose ends the list.
_PATH_GAP = re.compile(r"^(?:[\s,;&+/，；、]|\band\b|\bor\b)*$", re.IGNORECASE)
# Files without a dot that plans name bare; any other dotless word ("any", "PR") is prose, not a path.
_BARE_FILES = frozenset(
    {
        "Makefile",
        "Dockerfile",
        "Containerfile",
        "Procfile",
        "Gemfile",
        "Rakefile",
        "Justfile",
        "justfile",
        "Jenkinsfile",
        "Vagrantfile",
        "Brewfile",
        "README",
        "LICENSE",
        "CHANGELOG",
        "NOTICE",
        "CODEOWNERS",
    }
)
_DATE_PREFIX = re.compile(r"^\d{4}-\d{2}-\d{2}[-_ .]*")


_SPACES = re.compile(r"\s+")
_SPACE = re.compile(r"\s")
_TASK_PREFIX = re.compile(r"^task[\s_-]*", re.IGNORECASE)
_LEADING_ZEROS = re.compile(r"^0*(\d+)(.*)$")


@lru_cache(maxsize=4096)  # labels repeat in every task: `Files:`, `Depends on:`, `Step 1: ...`
def normalize_label(text: str) -> str | None:
    """The field name for a label such as `**Depends on:**` or `Acceptance Criteria`, else None."""
    key = _SPACES.sub(" ", text.strip().rstrip(":：").strip()).lower()
    return LABELS.get(key)


@lru_cache(maxsize=4096)
def step_title(text: str) -> str | None:
    """`Step 3: Run the tests` -> `Run the tests`; None when the text is not a step."""
    match = _STEP.match(text.strip().rstrip("*").strip())
    if match is None:
        return None
    return (match.group("title") or "").strip()


@lru_cache(maxsize=4096)  # each task heading is read twice: by the section split and by the reader
def task_heading(text: str) -> tuple[str, str] | None:
    """`Task 3a: Title` (also `：`, ` — `, ` - ` or `.`) -> ("3a", "Title"); `Task 3 (after Task 2): Title` ->
    ("3", "Title (after Task 2)"); None otherwise."""
    match = _TASK_HEADING.match(text.strip())
    if match is None:
        return None
    high = match.group("high")
    task_id = f"{match.group('id')}-{high}" if high else match.group("id")  # `3–6` is read as `3-6`
    title, when = match.group("title").strip(), match.group("when")
    # `Task 3 (after Task 2): Title`: the bracket goes to the end of the title, where refs.title_deps reads it.
    return normalize_task_id(task_id), f"{title} ({when.strip()})" if when else title


def heading_checked(text: str) -> bool:
    """Whether a task heading's text starts with a checked box (`[x] Task 3: Title`): the task is done."""
    return text[:1] in "[-*+" and _CHECKED.match(text.strip()) is not None


@lru_cache(maxsize=1024)
def task_heading_miss(text: str) -> tuple[str, str, str] | None:
    """(word, id, why) for a heading that starts with a task word and a number but is no task heading, else None:
    `Task 104 global loop` -> ("Task", "104", "no separator (such as ':') after the number")."""
    match = _TASK_START.match(text.strip())
    if match is None or task_heading(text) is not None:
        return None
    word, rest = match.group("word"), match.group("rest").strip()
    if not match.group("space") and word.lower() not in _WORDS_UNSPACED:
        why = f"no space between {word!r} and the number"
    elif rest in ("", ":", "：", ".", "-", "–", "—"):
        why = "no title after the number"
    else:
        why = "no separator (such as ':') after the number"
    return word, match.group("id"), why


def normalize_task_id(raw: str | int) -> str:
    """A task id as stored: `task-07` -> `07`, `Task 3` -> `3`, `3a` -> `3a`."""
    text = str(raw).strip()
    text = _TASK_PREFIX.sub("", text)
    return text


# Each id is keyed several times (duplicate check, references, the graph), each time in a pass over all
# the tasks: a cache smaller than the plan's ids is cycled through and misses every time.
@lru_cache(maxsize=1 << 15)
def canonical_id(task_id: str) -> str:
    """The key used to match references: `task-` dropped, case-folded, leading zeros dropped (`07` ~ `7`)."""
    if fastpath.ENABLED and task_id.isascii() and task_id.isdigit() and task_id[0] != "0":
        return task_id  # `12`, most ids: what the reading below gives it
    folded = normalize_task_id(task_id).casefold()
    match = _LEADING_ZEROS.match(folded)
    return match.group(1) + match.group(2) if match else folded


def parse_tier(value: str) -> Tier:
    """`critical` / `CRITICAL - touches billing` -> Tier.CRITICAL; ValueError for anything else."""
    word = re.split(r"[\s,;:(—–-]+", value.translate(FULL_WIDTH).strip().strip("`*").strip(), maxsplit=1)[0].lower()
    try:
        return Tier(word)
    except ValueError:
        raise ValueError(f"unknown tier {value.strip()!r} (expected critical, normal or low)") from None


_ESTIMATE = re.compile(r"^~?\s*(?P<n>\d+(?:\.\d+)?)\s*(?P<unit>[a-z]*|分钟|小时|天)\.?$", re.IGNORECASE)
# Hours are the unit; other units convert, and T-shirt sizes stand for a typical task of that size.
_UNIT_NAMES = {
    1.0: "h hr hrs hour hours pt pts point points 小时",
    1 / 60: "m min mins minutes 分钟",
    8.0: "d day days 天",
}
_UNITS = {"": 1.0} | {name: f for f, names in _UNIT_NAMES.items() for name in names.split()}
_SIZES = {"xs": 0.5, "s": 1.0, "small": 1.0, "m": 3.0, "medium": 3.0, "l": 8.0, "large": 8.0, "xl": 16.0}


def parse_estimate(value: str) -> float:
    """`2h`, `3`, `30 min`, `1.5 days`, `small` / `medium` / `large` -> a positive size; ValueError otherwise."""
    text = value.translate(FULL_WIDTH).strip().strip("`*").strip()
    word = re.split(r"[\s,;(—–]+", text, maxsplit=1)[0].lower()
    if word in _SIZES and not text[:1].isdigit():
        return _SIZES[word]
    match = _ESTIMATE.match(re.split(r"\s*[,;(—–]", text, maxsplit=1)[0])
    if match is not None and match.group("unit").lower() in _UNITS and float(match.group("n")) > 0:
        return float(match.group("n")) * _UNITS[match.group("unit").lower()]
    raise ValueError(f"unknown estimate {text!r} (expected e.g. 2h, 3, 30min, 1d, small, medium or large)")


def clean_path(raw: str) -> str:
    """A path as written in a plan -> a repository-relative POSIX path."""
    path = raw.strip().strip("`'\"").strip().rstrip(",;.")
    while path.startswith("./"):
        path = path[2:]
    return posix_path(path) if path else ""


def posix_path(path: str) -> str:
    """`str(PurePosixPath(path))`, without building one for a plain `a/b/c.py` (which it leaves as is)."""
    parts = path.split("/")
    return str(PurePosixPath(path)) if "" in parts or "." in parts else path


def parent_dir(path: str) -> str:
    """`str(PurePosixPath(path).parent)`, the same way round."""
    parts = path.split("/")
    if "" in parts or "." in parts:
        return str(PurePosixPath(path).parent)
    return "/".join(parts[:-1]) or "."


def split_range(raw: str) -> tuple[str, str | None]:
    """`src/a.py:123-145` -> ("src/a.py", "123-145"); `src/a.py` -> ("src/a.py", None)."""
    if ":" not in raw:  # no range to find, and _RANGE's lazy path would try every split of the text
        return raw.strip(), None
    match = _RANGE.match(raw.strip())
    if match is None:
        return raw.strip(), None
    return match.group("path"), re.sub(r"\s+", "", match.group("range")).replace("–", "-")


def add_file_entry(files: ExpectedFiles, text: str, code: tuple[str, ...]) -> bool:
    """Record one `Create: \\`path\\`` entry; False when the text is not a file entry.

    Only the paths the entry starts with count: in ``Modify: `a.yaml` (drop `X` from `y`)`` the
    code spans after the prose are not files.
    """
    # `Create: `src/a.py``: a path `clean_path` and `split_range` leave as it is, and nothing else.
    if fastpath.ENABLED and len(code) == 1 and _PLAIN_PATH.fullmatch(code[0]) and _only(text, code[0]):
        kind = FILE_KINDS.get(text.partition(":")[0].strip().lower())
        if kind is not None:
            add_path(files, kind, code[0])
            return True
    colon, wide = text.find(":"), text.find("：")
    if wide >= 0 and (colon < 0 or wide < colon):
        colon = wide
    kind_text, sep, rest = (text[:colon], ":", text[colon + 1 :]) if colon >= 0 else (text, "", "")
    kind = FILE_KINDS.get(kind_text.strip().lower())
    if not sep or kind is None:
        return _bare_entry(files, text, code)
    raws = _leading_paths(rest, code)
    for raw in raws:
        path, line_range = split_range(raw)
        path = clean_path(path)
        if not path:
            continue
        add_path(files, kind, path)
        if kind == "modify" and line_range:
            files.modify_ranges[path] = line_range
    return bool(raws)


# An entry without a `Create:` word: paths, each with an optional bracketed tag (`(create)`, `(lines 45-93)`),
# separated as in `_PATH_GAP`; then prose, which may end with a tag for the paths that have none.
# A path stands alone: `Context.Tag("x")` is a call, not the file `Context.Tag`.
_BARE_PART = re.compile(r"\s*(?P<path>[^\s,;()（）]+)(?=[\s,;，；、]|$)(?:\s*[(（](?P<tag>[^()（）]*)[)）])?")
_BARE_GAP = re.compile(r"[\s,;&+，；、]*(?:\b(?:and|or)\s+)?", re.IGNORECASE)
_TRAILING_TAG = re.compile(r"[(（](?P<tag>[^()（）]*)[)）]\W*$")
_TAG_KIND = re.compile(r"(?:an?\s+)?(?P<kind>\w+)(?:\s+file)?", re.IGNORECASE)
_TAG_RANGE = re.compile(rf"(?:lines?|l\.)\s*(?P<range>{_SPAN}(?:\s*,\s*{_SPAN})*)", re.IGNORECASE)
# A bare word read as a file: `name.ext` (a letter starts the extension, so `1.5` and `v2.0` are no files; alone,
# the name has two characters, so `e.g.` and `i.e.` are none) or `.env`; `/` words need such a file or a folder at
# their end (`src/x.py`, `migrations/`), so `N/A` and `and/or` are prose.
_EXT = r"\.[A-Za-z][A-Za-z0-9]{0,9}"
_BARE_NAME = re.compile(rf"(?:[^/]*/)+(?:[\w.-]*[\w-]{_EXT}|\.[\w-]+)|\.?[\w-]{{2,}}(?:\.[\w-]+)*{_EXT}|\.[\w-]+")


def _bare_entry(files: ExpectedFiles, text: str, code: tuple[str, ...]) -> bool:
    """An entry that starts with its paths and names no kind (`a.go (lines 45-93)`, `src/app.py — the handler`,
    `a.tsx (create)`): a path to modify unless a tag says `(create)`/`(new)` or `(delete)`/`(remove)`."""
    found: list[tuple[str, str | None, str | None]] = []  # path, kind its own tag names, line range
    position = end = 0
    while (part := _BARE_PART.match(text, position)) is not None:
        raw, line_range = split_range(part.group("path"))
        path = clean_path(raw)
        if not path or not _PLAIN_PATH.fullmatch(path) or not _is_named_path(raw.strip().rstrip(",;."), code):
            break
        tag = (part.group("tag") or "").strip()
        ranged = _TAG_RANGE.fullmatch(tag)
        line_range = ranged.group("range") if ranged is not None else line_range
        found.append((path, _tag_kind(tag), line_range))
        end = part.end()
        gap = _BARE_GAP.match(text, end)
        position = gap.end() if gap is not None else end
    if not found:
        return False
    trailing = _TRAILING_TAG.search(text, end)
    default = (_tag_kind(trailing.group("tag")) if trailing is not None else None) or "modify"
    for path, kind, line_range in found:
        add_path(files, kind or default, path)
        if (kind or default) == "modify" and line_range:
            files.modify_ranges[path] = re.sub(r"\s+", "", line_range).replace("–", "-")
    return True


def _tag_kind(tag: str) -> str | None:
    """`create`, `new file`, `NEW`, `删除` -> the kind it names; None for anything else (`DELETE or deprecate`)."""
    match = _TAG_KIND.fullmatch(tag.strip())
    return FILE_KINDS.get(match.group("kind").lower()) if match is not None else None


def _is_named_path(word: str, code: tuple[str, ...]) -> bool:
    """Whether a word that starts an entry names a file: a code span that looks like a path, or a bare word
    shaped like one (`_BARE_NAME`) or a bare file name (`Makefile`)."""
    if word in code:
        return looks_like_path(word)
    if word.endswith("/"):
        return len(word.rstrip("/")) > 1
    return word in _BARE_FILES or _BARE_NAME.fullmatch(word) is not None


# Prose names files less plainly than a Files list: a word without `/` is one only with a file extension
# (`pyproject.toml`, not `app.state` or `user.id`), and `Next.js` is a framework.
# fmt: off
_FILE_EXTENSIONS = frozenset({
    "py", "pyi", "ts", "tsx", "js", "jsx", "mjs", "cjs", "json", "yaml", "yml", "toml", "md", "mdx", "rst", "txt",
    "css", "scss", "sass", "less", "html", "htm", "sql", "sh", "bash", "go", "rs", "rb", "java", "kt", "kts", "swift",
    "c", "h", "cc", "cpp", "hpp", "cs", "php", "ini", "cfg", "conf", "lock", "xml", "vue", "svelte", "dart", "ex",
    "exs", "proto", "graphql", "gql", "tf", "lua", "csv", "ipynb", "gradle", "mod", "sum",
})
# fmt: on
_FRAMEWORK = re.compile(r"[A-Z][a-z]+\.js")


def prose_path(word: str) -> str | None:
    """The file a word of prose names (`src/a.py,` -> `src/a.py`, `.env.example`, `Makefile`); None otherwise."""
    text = word.strip("`'\"*").rstrip(",;:.)").strip("`'\"")
    if not text or _FRAMEWORK.fullmatch(text) or not _is_named_path(text, ()):
        return None
    path = clean_path(text)
    if not _PLAIN_PATH.fullmatch(path):
        return None
    tail = path.rsplit("/", 1)[-1]
    if "/" in text or tail.startswith(".") or tail in _BARE_FILES:
        return path
    return path if tail.rpartition(".")[2].lower() in _FILE_EXTENSIONS else None


def _only(text: str, span: str) -> bool:
    return "：" not in text and text.partition(":")[2].strip() == span


def _leading_paths(rest: str, code: tuple[str, ...]) -> list[str]:
    """The code spans at the start of an entry, else its first word when that looks like a path."""
    found: list[str] = []
    position = 0
    for span in code:
        at = rest.find(span, position)
        gap = rest[position:at]
        # A gap of spaces (the usual one) is a separator; anything else is asked of _PATH_GAP.
        if at < 0 or not (gap.isspace() or not gap or _PATH_GAP.match(gap)):
            break
        if span.strip() and (looks_like_path(span) or not _SPACE.search(span.strip())):
            found.append(span)
        position = at + len(span)
    if found:
        return found
    words = rest.split()
    first = words[0].strip("`'\"()[],;（）【】，；、") if words else ""
    return [first] if first and looks_like_path(split_range(first)[0]) else []


def looks_like_path(text: str) -> bool:
    """`src/a.py`, `.env`, `Makefile`: yes; `any`, `PR`, `gh pr edit`: no."""
    word = text.strip().rstrip(",;.")
    if not word or _SPACE.search(word):
        return "/" in word and not word.startswith("/ ")
    return "/" in word or "." in word.lstrip(".")[:-1] or word.startswith(".") or word in _BARE_FILES


def add_path(files: ExpectedFiles, kind: str, path: str) -> None:
    """Append a path to one ExpectedFiles list, once."""
    bucket: list[str] = getattr(files, kind)
    if path not in bucket:
        bucket.append(path)


def plan_id_from_path(stem: str) -> str:
    """`2026-02-18-wellness-cbt` -> `wellness-cbt`: the file stem, date dropped, slugged."""
    text = _DATE_PREFIX.sub("", stem)
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug or "plan"
