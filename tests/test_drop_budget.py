"""Dropping to a budget (core.drop.plan_budget): what a target out of reach keeps, and which step
reaches the target."""
from ctxkit.core.drop import DROP, KEEP, SHRINK, ChunkFacts, plan_budget


def chunk(score, saving, shrink_saving=0):
    return ChunkFacts(message=True, protected=False, score=score, saving=saving, shrink_saving=shrink_saving)


NEWEST = chunk(0.9, 50)   # min_keep=1 keeps it


def test_a_target_out_of_reach_frees_what_it_can_but_keeps_shrunk_outputs_at_their_kept_lines():
    chunks = [chunk(0.8, 1000, 600), chunk(0.3, 500), NEWEST]
    plan = plan_budget(chunks, 5000, 1)
    assert not plan.in_reach
    assert [d.action for d in plan.decisions] == [SHRINK, DROP, KEEP]


def test_a_target_in_reach_drops_a_shrunk_output_whole_when_it_must():
    chunks = [chunk(0.8, 1000, 600), chunk(0.3, 500), NEWEST]
    plan = plan_budget(chunks, 1200, 1)    # shrinking and the other drop free 1100: not enough
    assert plan.in_reach
    assert [d.action for d in plan.decisions] == [DROP, DROP, KEEP]


def test_the_step_that_reaches_the_target_is_the_one_that_loses_least():
    # the large chunk is the cheapest per token, but 500 tokens are asked: dropping it would free
    # 20 times that and lose more than the small one does
    chunks = [chunk(0.5, 10000), chunk(0.3, 600), NEWEST]
    plan = plan_budget(chunks, 500, 1)
    assert [d.action for d in plan.decisions] == [KEEP, DROP, KEEP]
    # when only the large one reaches the target, it goes
    plan = plan_budget(chunks, 700, 1)
    assert plan.decisions[0].action == DROP


def test_a_budget_still_frees_at_least_its_target_when_it_can():
    chunks = [chunk(s, n, n // 2 if k % 3 == 0 else 0)
              for k, (s, n) in enumerate([(0.2, 300), (0.7, 4000), (0.4, 900), (0.6, 2500), (0.1, 120),
                                          (0.5, 7000), (0.3, 650), (0.8, 1500)])] + [NEWEST]
    for target in (100, 1000, 5000, 10000, 15000):
        plan = plan_budget(chunks, target, 1)
        freed = 0
        for c, d in zip(chunks, plan.decisions):
            freed += c.saving if d.action == DROP else c.shrink_saving if d.action == SHRINK else 0
        assert freed >= target, target
