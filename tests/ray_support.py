"""The local Ray fixture shared by the runner, pipeline and CLI tests (import it by name:
a session fixture, so Ray starts once per test run)."""
import pytest


@pytest.fixture(scope="session")
def ray_local():
    import ray

    from services.runner import init_ray

    init_ray(num_cpus=2)
    yield ray
    ray.shutdown()
