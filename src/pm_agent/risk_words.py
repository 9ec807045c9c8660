"""One vocabulary for risky topics: the areas seed 001 calls CRITICAL and the words and paths that name them.

Both tier decisions read it, so they name an area the same way: `pm_agent.plan.tier_rules` classifies a
planned task (its title, prose and expected paths), `pm_agent.gates.tier_review` reviews the actual
change (its changed paths and lines). An area's `words` count in prose and in the words of a path.
Its `changed_path_words` count only in the words of a changed file's path: too common in prose and in
planned file names ("api", "env") to tier a plan on, they are a fact once the change touches the file.
Its `cjk_words` are the same topics as Chinese plans write them (认证, 迁移, 支付 ...): Chinese has no
spaces between words, so they match anywhere, also right after a Latin word ("JWT认证").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "AREA_WORDS",
    "CHANGED_LINES",
    "PATHS",
    "AreaWords",
    "RiskArea",
    "changed_path_areas",
    "cjk_pattern",
    "path_pattern",
    "path_words",
    "words_pattern",
]


class RiskArea(StrEnum):
    """A risky topic; the value is the name every report, log line and gate detail shows."""

    AUTH = "auth"
    BILLING = "billing/finops"
    SCHEMA = "schema/migrations"
    SECRETS = "secrets/env"
    DATA_INTEGRITY = "data integrity"
    INFRA = "infra/docker"
    SECURITY = "security"
    PUBLIC_API = "public API"


def words_pattern(spec: str) -> re.Pattern[str]:
    """Whole words only: `auth` hits `auth` and `auth-service`, never `author` or `authority`.

    `spec` lists regex alternatives separated by whitespace; `_` inside one stands for a space.
    """
    alternatives = "|".join(word.replace("_", " ") for word in spec.split())
    return re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])", re.IGNORECASE)


def cjk_pattern(spec: str) -> re.Pattern[str]:
    """Chinese words separated by whitespace, matched anywhere (Chinese text has no word boundaries to look for).

    A word may start with lookbehinds that rule out a compound: `(?<!线程)安全` is "security", not "thread-safe".
    """
    return re.compile("|".join(spec.split()))


def path_pattern(spec: str) -> re.Pattern[str]:
    """Regex alternatives separated by whitespace, matched against a POSIX path in any letter case."""
    return re.compile("|".join(spec.split()), re.IGNORECASE)


def path_words(path: str) -> str:
    """`src/auth/LoginForm.tsx` -> `src auth Login Form tsx`: a path as words, for the word patterns."""
    spaced = _CAMEL.sub(" ", path) if path.lower() != path else path  # no capital: nothing to split
    return _PATH_SEPARATORS.sub(" ", spaced)


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_PATH_SEPARATORS = re.compile(r"[/_.\-\\]+")


@dataclass(frozen=True)
class AreaWords:
    """The words that name one area: `words` anywhere, `changed_path_words` only in a changed file's path."""

    area: RiskArea
    words: re.Pattern[str]
    changed_path_words: re.Pattern[str] | None = None
    cjk_words: re.Pattern[str] | None = None


AREA_WORDS: tuple[AreaWords, ...] = (
    AreaWords(
        RiskArea.AUTH,
        words_pattern("""
        auth[nz]? authenticat(?:e|es|ed|ing|ion|or) authori[sz](?:e|es|ed|ing|ation|ations) oauth2? oidc
        log[-_]?ins? log[-_]?outs? sign[-_]?(?:in|up)s? passwords? passwd jwts? sso saml mfa 2fa rbac acls?
        permissions? access[-_]tokens?
    """),
        cjk_words=cjk_pattern("认证 鉴权 授权 身份验证 登录 登出 单点登录 密码 口令 权限 访问令牌"),
    ),
    AreaWords(
        RiskArea.BILLING,
        words_pattern("""
        billing bills? invoic(?:e|es|ed|ing) payments? payouts? pricing subscriptions? stripe refunds?
        checkout finops costs? spend(?:ing)?
    """),
        cjk_words=cjk_pattern("计费 账单 支付 付款 收费 发票 退款 订阅 定价 结账 费用"),
    ),
    AreaWords(
        RiskArea.SCHEMA,
        words_pattern("""
        migrations? migrat(?:e|es|ed|ing) alembic flyway ddl alter_table
        (?<!json_)(?<!yaml_)(?<!xml_)(?<!graphql_)(?<!openapi_)(?<!pydantic_)(?<!config_)schemas?
    """),
        cjk_words=cjk_pattern("迁移 表结构 数据库结构 数据库模式 建表"),
    ),
    AreaWords(
        RiskArea.SECRETS,
        words_pattern(r"secrets? api[-_]keys? private[-_]keys? credentials? \.env dotenv vault kms keystore pem"),
        words_pattern("env envrc"),
        cjk_words=cjk_pattern("密钥 秘钥 私钥 凭据 凭证 机密"),
    ),
    AreaWords(
        RiskArea.DATA_INTEGRITY,
        words_pattern("data_integrity integrity data_loss corruption backups? restores?"),
        cjk_words=cjk_pattern("数据完整性 完整性 数据丢失 数据损坏 备份 数据恢复"),
    ),
    AreaWords(
        RiskArea.INFRA,
        words_pattern("""
        infra infrastructure docker(?:file)? docker[-_]compose dockeri[sz](?:e|es|ed|ing)
        containeri[sz](?:e|es|ed|ing|ation) kubernetes k8s helm kustomization terraform pulumi ansible
        jenkinsfile deploy(?:s|ed|ing|ments?)? nginx ci/cd
    """),
        cjk_words=cjk_pattern("基础设施 部署 容器化"),
    ),
    AreaWords(
        RiskArea.SECURITY,
        words_pattern("""
        security vulnerabilit(?:y|ies) cves? xss csrf sql_injection injection sanitiz(?:e|es|ed|ing|ation)
        encrypt(?:s|ed|ion)? decrypt(?:s|ed|ion)? tls cors
    """),
        # 安全 alone is also "safe": thread-, type- and memory-safe code is not a security topic.
        cjk_words=cjk_pattern("(?<!线程)(?<!类型)(?<!内存)(?<!并发)安全 漏洞 加密 解密 注入 跨站"),
    ),
    AreaWords(
        RiskArea.PUBLIC_API,
        words_pattern("public_api public_interface breaking_changes? api_contract openapi api_version(?:s|ing)?"),
        words_pattern("apis? swagger graphql proto"),
        cjk_words=cjk_pattern("公开接口 公共接口 对外接口 破坏性变更 接口契约"),
    ),
)

# Paths that belong to an area by their name or folder, whatever their words (POSIX separators).
PATHS: tuple[tuple[RiskArea, re.Pattern[str]], ...] = (
    (
        RiskArea.SCHEMA,
        path_pattern(r"(^|/)(migrations?|alembic)/ \.sql$ (^|/)schema\.(sql|prisma|rb|graphql|json|ya?ml)$"),
    ),
    (
        RiskArea.SECRETS,
        path_pattern(r"(^|/)\.env(\.[^/]*)?$ (^|/)\.envrc$ \.(pem|key|p12|pfx|jks)$ (^|/)secrets?(/|\.[^/]*$)"),
    ),
    (
        RiskArea.INFRA,
        path_pattern(r"""
        (^|/)(dockerfile|containerfile)[^/]*$ (^|/)(docker-)?compose[^/]*\.ya?ml$ (^|/)\.dockerignore$ \.tf(vars)?$
        (^|/)(infra|terraform|k8s|kubernetes|helm|deploy|deployment)/
        (^|/)\.gitlab-ci\.yml$ (^|/)jenkinsfile$ (^|/)chart\.yaml$ (^|/)procfile$ ^\.github/workflows/ ^\.circleci/
    """),
    ),
    (
        RiskArea.PUBLIC_API,
        path_pattern(r"(^|/)(openapi|swagger)[^/]*\.(ya?ml|json)$ \.proto$ \.graphqls?$"),
    ),
)

# Changed lines (added or removed) that touch an area whatever file they are in.
CHANGED_LINES: tuple[tuple[RiskArea, re.Pattern[str]], ...] = (
    (RiskArea.SCHEMA, re.compile(
        r"\b(CREATE|ALTER|DROP|TRUNCATE)\s+(TABLE|INDEX|COLUMN|SCHEMA|TYPE|VIEW)\b"
        r"|\bop\.(add_column|drop_column|create_table|drop_table|alter_column|create_index|drop_index)\b",
        re.IGNORECASE,
    )),
    (RiskArea.AUTH, re.compile(
        r"\b(verify_password|check_password|hash_password|login_required|authenticate|jwt\.(en|de)code"
        r"|bcrypt|argon2|set_password|has_perm|is_authenticated|require_auth)\b"
    )),
    (RiskArea.SECRETS, re.compile(r"\b(SECRET_KEY|API_KEY|PRIVATE_KEY|ACCESS_TOKEN|CLIENT_SECRET)\b")),
)  # fmt: skip


def changed_path_areas(path: str) -> list[RiskArea]:
    """The areas a changed file belongs to, by its name or folder, then by its words; empty for ordinary code."""
    found = [area for area, pattern in PATHS if pattern.search(path)]
    spaced = path_words(path)
    for entry in AREA_WORDS:
        extra, cjk = entry.changed_path_words, entry.cjk_words
        hit = entry.words.search(spaced) or (extra is not None and extra.search(spaced))
        if hit or (cjk is not None and not path.isascii() and cjk.search(path)):
            found.append(entry.area)
    return list(dict.fromkeys(found))
