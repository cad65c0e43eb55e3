"""A module keeps its verifier facts through pickle and deepcopy (tfx.ir.nodes.Module.__getstate__).

The verifier keys each op's operand and result types by id(op); a copy made by pickle (an
Analysis coming back from the explorer's worker process) has new ops with new ids, so before the
fix a copy failed check_shapes ("not enough values to unpack": the mma found no operand types)."""
import copy
import pickle
from pathlib import Path

import pytest

from tfx.analysis.analyze import analyze
from tfx.hw import load_profile
from tfx.lang import parse_file

ROOT = Path(__file__).resolve().parent.parent
KERNELS = sorted(p.name for p in (ROOT / "kernels").glob("*.tile"))


def test_gemm_tables_travel_whole():
    """kernels/gemm.tile has 6 ops in its walk: zeros, load A, load B, mma, cast, store. Each has
    operand types (6 entries); all but the store make a value (5 result types). A pickled copy
    and a deep copy keep all 6 and 5, keyed by their own ops' ids."""
    module = parse_file(str(ROOT / "kernels" / "gemm.tile"))
    for clone in (pickle.loads(pickle.dumps(module)), copy.deepcopy(module)):
        info = clone.info["gemm"]
        ops = clone._ops_of("gemm")
        assert len(ops) == 6
        assert len(info.operand_types) == 6 and len(info.result_types) == 5
        assert set(info.operand_types) == {id(op) for op in ops}


@pytest.mark.parametrize("name", KERNELS)
def test_a_pickled_analysis_module_analyzes_again(name):
    """The module an Analysis carries, pickled and loaded, analyzes to the same predicted time."""
    profile = load_profile("sip" if name.startswith("sip_") else "h200_sxm")   # sip kernels use hbm/tcm
    module = parse_file(str(ROOT / "kernels" / name))
    first = analyze(module, None, profile)
    back = pickle.loads(pickle.dumps(first))
    again = analyze(back.module, None, profile)
    assert again.metrics["performance.predicted_ns"] == first.metrics["performance.predicted_ns"]
