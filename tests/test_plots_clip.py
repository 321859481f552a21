"""plots.clip_objective draws PPO's clipped objective and its slope (Part II §4, Part III §2)."""
import matplotlib
import numpy as np

matplotlib.use("Agg")
from toy import plots  # noqa: E402


def test_clip_objective_draws_the_objective_and_its_slope():
    fig = plots.clip_objective(0.2, advantages=(2.0, -1.0))
    left, right = fig.axes
    solid = [l for l in left.lines if l.get_linestyle() == "-"]
    for line, A in zip(solid, (2.0, -1.0)):
        rho, J = line.get_data()
        np.testing.assert_allclose(J, np.minimum(rho * A, np.clip(rho, 0.8, 1.2) * A))
    for line, A in zip(right.lines, (2.0, -1.0)):
        rho, dJ = line.get_data()
        clipped = (rho > 1.2) if A > 0 else (rho < 0.8)
        inside = np.abs(rho - np.where(A > 0, 1.2, 0.8)) > 1e-3        # away from the kink
        np.testing.assert_allclose(dJ[inside], np.where(clipped, 0.0, A)[inside], atol=1e-6)
    assert [t.get_text() for t in left.get_legend().get_texts()] == ["A = +2", "A = -1"]
    matplotlib.pyplot.close(fig)
