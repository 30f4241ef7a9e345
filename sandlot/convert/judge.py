"""The judge's configuration from the wire's shapes, and its verdicts and datasets in them."""

from __future__ import annotations

from sandlot.convert.run import run_limits, run_response
from sandlot.errors import InvalidRequest
from sandlot.judge import EvalResult as JudgeResult
from sandlot.judge import Judge, JudgeConfig, TestOutcome, weakest
from sandlot.wire import DatasetInfo, EvalResult, EvalTestCase, LanguageIntegrity, TestConfig


def judge_config(cfg: TestConfig, language: str | None = None) -> JudgeConfig:
    if cfg.custom_extract_logic:
        raise InvalidRequest(
            "config.custom_extract_logic is not supported: sandlot never runs client code in the "
            "server. Extract the code yourself, or choose a block with config.extra.code_block_idx"
        )
    return JudgeConfig(
        language=cfg.language or language,
        locale=cfg.locale,
        is_fewshot=bool(cfg.is_fewshot),
        dataset_type=cfg.dataset_type,
        provided_data=cfg.provided_data,
        extra=dict(cfg.extra or {}),
        **run_limits(cfg),
    )


def eval_result(result: JudgeResult, simple: bool = False) -> EvalResult:
    return EvalResult(
        id=result.id,
        accepted=result.accepted,
        extracted_code=result.extracted_code,
        full_code=result.full_code,
        test_code=result.test_code,
        tests=[test_case(t) for t in result.tests],
        extracted_type=result.extracted_type,  # type: ignore[arg-type]
        extra=result.extra,
        passed=result.accepted if simple else None,
    )


def test_case(test: TestOutcome) -> EvalTestCase:
    assert test.execution is not None
    return EvalTestCase(
        passed=test.passed,
        exec_info=run_response(test.execution, judged=True),
        test_info=test.test_info,
        verdict=test.verdict.value,
    )


def dataset_infos(judge: Judge) -> list[DatasetInfo]:
    out = []
    for name in judge.datasets.names():
        spec = judge.datasets.spec(name)
        by_language = judge.dataset_integrity(name)
        out.append(
            DatasetInfo(
                name=name,
                aliases=list(spec.aliases),
                family=spec.family.name,
                summary=spec.summary,
                integrity=weakest([i.level for i in by_language.values()]).value,
                languages={
                    lang: LanguageIntegrity(**i.as_dict()) for lang, i in by_language.items()
                },
            )
        )
    return out
