"""AI variants at run time: prompt the model, validate its answer, record everything.

Every rejection is an event (and an ai_generation_failure.json in the tree); every
accepted variant carries its model, options, seed and prompt. Model calls are
memoised in the store, so resuming regenerates the same variants for free. With an
`ai_judge`, a rewrite the rules accept is also put to the judge, both ways round.
"""

from collections.abc import Callable
from typing import Any

from ironbench.core.errors import IronbenchError
from ironbench.core.events import AiOutputRejected, VariantGenerated
from ironbench.core.prices import AI_REWRITE, REWRITE_GUARD
from ironbench.core.spending import Spending
from ironbench.generators import (
    JUDGE_OPTIONS,
    JUDGE_SYSTEM,
    AiParams,
    JudgeVerdict,
    judge_questions,
    normalise_output,
    one_sentence_grammar,
    requirement_terms,
    seeded_rng,
    validate_rewrite,
)
from ironbench.llms import CallUsage, ModelClient, ModelError, get_model
from ironbench.run.planner import AiVariants, Variant, ai_entries, generator_of
from ironbench.store import EventStore, Pending
from ironbench.suite import Suite


class MaxFailuresReached(IronbenchError):
    """--max-failures rejections of AI output: the run stops (resumable)."""

    exit_code = 1


def preflight_models(suite: Suite, source: str = "suite") -> None:
    """Every model a suite names must exist before anything is written; a missing one is
    named by the suite file (`source`), the case and the field."""
    cases = {id(case): (index, case) for index, case in enumerate(suite.cases)}
    for case, entry in ai_entries(suite):
        index, _ = cases[id(case)]
        position = next(i for i, g in enumerate(case.variants) if g is entry)
        judge = suite.ai_judge_of(entry)
        params = entry.params
        assert isinstance(params, AiParams)  # (ai_entries yields AI generators' entries)
        own_judge = "ai_judge" in params.model_fields_set
        for model, field in ((params.model, "model"), (judge, "ai_judge")):
            if model is None:
                continue
            try:
                get_model(model)
            except ModelError as exc:
                where = suite.case_where(index, "variants", position, "params", field)
                if field == "ai_judge" and not own_judge:
                    where = "ai_judge"
                raise ModelError(f"{source}: {where}: {exc}") from None


def call_seed(seed: int, case_id: str, generator: str, slot: int, attempt: int) -> int:
    """A distinct, reproducible sampling seed per (slot, attempt)."""
    return seeded_rng("ai-seed", seed, case_id, generator, slot, attempt).randrange(2**31)


def ask_judge(client: ModelClient, base: str, rewrite: str) -> JudgeVerdict:
    """The judge's two answers (cached in the store like every model call)."""
    answers = {
        direction: client.complete(question, JUDGE_OPTIONS, system=JUDGE_SYSTEM).text
        for direction, question in judge_questions(base, rewrite).items()
    }
    return JudgeVerdict(client.model_id, answers)


def generate_ai_variants(
    suite: Suite,
    run_id: str,
    store: EventStore,
    append: Callable[[list[Pending]], object],
    max_failures: int | None = None,
    note: Callable[[str], None] = lambda _: None,
    spending: Spending | None = None,
) -> AiVariants:
    """Every AI generator's variants, each attempt's rewrite (and the judge's answers) recorded
    with the price of its model calls (`spending`; answers from the store's cache cost nothing)."""
    variants: dict[tuple[str, str], list[Variant]] = {}
    clients: dict[tuple[str, str], ModelClient] = {}
    calls: list[tuple[str, CallUsage]] = []  # this attempt's model calls, by who made them

    def client(model: str, caller: str) -> ModelClient:
        def meter(usage: CallUsage) -> None:
            calls.append((caller, usage))

        found = clients.get((model, caller))
        if found is None:
            found = clients[(model, caller)] = ModelClient(model, store.conn, store.redactor, meter)
        return found

    def priced(stream: str, attempt: int, case_id: str, variant_id: str) -> list[Pending]:
        """The attempt's model calls, priced (none when no run prices them)."""
        made = (
            []
            if spending is None
            else [
                Pending(
                    stream,
                    spending.priced(
                        caller,
                        usage.model,
                        usage.input_tokens,
                        usage.output_tokens,
                        usage.cached_tokens,
                        usage.seconds,
                        from_cache=usage.from_cache,
                        case_id=case_id,
                        variant_id=variant_id,
                        index=index,
                    ),
                    idempotency_key=f"priced:{run_id}/{stream}/{attempt}/{index}",
                )
                for index, (caller, usage) in enumerate(calls, start=1)
            ]
        )
        calls.clear()
        return made

    attempts: dict[str, int] = {}
    accepted: dict[str, int] = {}
    failures = 0
    for case, entry in ai_entries(suite):
        generator = generator_of(entry.generator)
        params = entry.params
        assert isinstance(params, AiParams)  # (ai_entries yields AI generators' entries)
        rewriter = client(params.model, AI_REWRITE)
        judge_model = suite.ai_judge_of(entry)
        judge = client(judge_model, REWRITE_GUARD) if judge_model is not None else None
        terms = requirement_terms(params)
        made = variants.setdefault((case.id, entry.generator), [])
        seen = {case.instruction}
        for slot in range(1, entry.count + 1):
            variant_id = f"{entry.generator}/variant_{slot:04d}"
            stream = f"adversarial/{case.id}/{variant_id}"
            prompt, described = generator.function(case.instruction, params, slot)
            style = {k: v for k, v in described.items() if k != "openings"}
            openings = tuple(described.get("openings", ()))
            for attempt in range(1, params.max_attempts + 1):
                # One plain sentence, opening as the style does, by constrained decoding where
                # the backend has a grammar option; applicable_options drops it elsewhere, and
                # options_applied says so.
                seed = call_seed(entry.seed, case.id, entry.generator, slot, attempt)
                options = {
                    "temperature": params.temperature,
                    "max_tokens": params.max_tokens,
                    "seed": seed,
                    "grammar": one_sentence_grammar(case.instruction, openings),
                }
                reply = rewriter.complete(prompt, options, attempt=attempt)
                attempts[entry.generator] = attempts.get(entry.generator, 0) + 1
                text = normalise_output(reply.text)
                reasons = validate_rewrite(case.instruction, text, generator.rules, terms)
                if not reasons and text in seen:
                    reasons = ["duplicate of the base instruction or an earlier variant"]
                verdict = None
                if not reasons and judge is not None:
                    verdict = ask_judge(judge, case.instruction, text)
                    judged = verdict.reason()
                    reasons = [judged] if judged else []
                # the variant slot and the model's answer this attempt is about
                slot_attempt: dict[str, Any] = {
                    "case_id": case.id,
                    "generator": entry.generator,
                    "variant_id": variant_id,
                    "attempt": attempt,
                    "base_instruction": case.instruction,
                }
                if reasons:
                    failures += 1
                    rejected = AiOutputRejected(
                        **slot_attempt,
                        ai_output=reply.text,
                        normalised_output=text,
                        failure_reasons=reasons,
                        model=params.model,
                        prompt=prompt,
                        options=options,
                        judge=None if verdict is None else verdict.to_dict(),
                    )
                    append(
                        [
                            *priced(stream, attempt, case.id, variant_id),
                            Pending(stream, rejected, idempotency_key=f"rejected:{run_id}/{stream}/{attempt}"),
                        ]
                    )
                    note(f"  {case.id} {variant_id} attempt {attempt}: rejected ({reasons[0]})")
                    if max_failures is not None and failures >= max_failures:
                        raise MaxFailuresReached(
                            f"run {run_id} stopped: {failures} AI outputs rejected (--max-failures {max_failures}); "
                            f"continue with: ironbench resume {run_id} --max-failures N"
                        )
                    continue
                seen.add(text)
                metadata = {
                    "source": "ai",
                    "model": params.model,
                    "options": options,
                    "options_applied": reply.options_applied,
                    "prompt": prompt,
                    "cached": reply.cached,
                    "duration_ms": reply.duration_ms,
                    **style,
                }
                if text != reply.text:
                    metadata["raw_output"] = reply.text
                if verdict is not None:
                    metadata["judge"] = verdict.to_dict()
                variant = Variant(
                    case.id,
                    entry.generator,
                    variant_id,
                    slot,
                    text,
                    case.instruction,
                    entry.seed,
                    params.model_dump(mode="json"),
                    attempt,
                    metadata,
                )
                made.append(variant)
                generated = VariantGenerated(
                    **slot_attempt,
                    mode="adversarial",
                    instruction=text,
                    seed=seed,
                    params=variant.params,
                    metadata=metadata,
                )
                key = f"variant:{run_id}/adversarial/{case.id}/{variant_id}"
                append([*priced(stream, attempt, case.id, variant_id), Pending(stream, generated, idempotency_key=key)])
                accepted[entry.generator] = accepted.get(entry.generator, 0) + 1
                note(f"  {case.id} {variant_id} attempt {attempt}: accepted")
                break
    if attempts:
        note("AI variants accepted: " + acceptance_line(accepted, attempts))
    return variants


def acceptance_line(accepted: dict[str, int], attempts: dict[str, int]) -> str:
    """'ai_rewrite 2 of 5 attempts (40%), ...' in generator order."""
    return ", ".join(
        f"{g} {accepted.get(g, 0)} of {n} attempt{'s' if n != 1 else ''} ({100 * accepted.get(g, 0) / n:.0f}%)"
        for g, n in attempts.items()
    )
