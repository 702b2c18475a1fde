"""The one compiled part: ``substrate._native``, the per-append seal (optional).

Everything else is in ``pyproject.toml``. Without OpenSSL's and zlib's headers the
extension is skipped (``optional=True``) and every frame is sealed in Python, byte for
byte the same (``substrate/_native.c``; ``tests/test_substrate_native.py``).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "substrate._native",
            ["substrate/_native.c"],
            libraries=["crypto", "z"],
            extra_compile_args=["-O2", "-Wall", "-Wextra", "-Wno-missing-field-initializers"],
            optional=True,
        )
    ]
)
