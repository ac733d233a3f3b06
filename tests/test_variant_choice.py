"""--variant: "default" is each target's own default, a name applies to each target that
has it, TARGET:NAME to that target only, and a target no item names runs its default."""

import pytest

from msgbench.cli import main
from msgbench.data.store import Store
from msgbench.running.runner import PlanError, _chosen_variants
from msgbench.workers import targets


def _names(choice: str) -> list[str]:
    fake = targets.target("fake")
    return [v.name for v in _chosen_variants(fake, "ring", choice, fake.variants_for("ring"))]


def test_default_keeps_the_targets_own_default_beside_named_variants(fake_targets):
    assert _names("default,slow") == ["ok", "slow"]  # as java's threads beside virtual
    assert _names("slow,default") == ["slow", "ok"]
    assert _names("default,ok") == ["ok"]  # once, however often it is named


def test_a_per_target_form_picks_for_that_target_only(fake_targets):
    assert _names("fake:slow") == ["slow"]
    assert _names("fakebroker:default") == ["ok"]  # another target's: this one runs its default
    assert _names("default,fake:slow") == ["ok", "slow"]


def test_a_per_target_name_the_target_lacks_is_refused_by_name(fake_targets):
    with pytest.raises(PlanError, match="--variant fake:virtual: target fake has no variant 'virtual' for ring"):
        _names("fake:virtual")


def test_a_run_with_the_per_target_form(fake_targets):
    assert main(["run", "ring", "--target", "fake", "--variant", "default,fake:slow", "-p", "n=10",
                 "--repeat", "1", "--warmup", "0", "--no-build"]) == 0
    store = Store(fake_targets)
    measured = store.measurements(store.runs()[0]["id"])
    assert sorted({m["variant"] for m in measured}) == ["ok", "slow"]
