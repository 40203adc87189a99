"""The app's URL rules, whose URL builders are made on first use instead of when the rule is added.

Werkzeug turns every rule into a matcher and into two URL builders (generated Python, parsed and compiled), the
latter only for `url_for`, which the service never calls: it answers requests, it does not build its own URLs.
With some three hundred rules, the builders were most of the time an app took to build (about 0.1 s of CPU), paid
by every start and by every test that starts the service. Matching is unchanged; a builder is made the first time
something builds a URL with the rule.
"""

from __future__ import annotations

from collections.abc import Callable

from werkzeug.routing import Rule


class RuleBuiltOnDemand(Rule):
    def _compile_builder(self, append_unknown: bool = True) -> Callable[..., tuple[str, str]]:
        made: Callable[..., tuple[str, str]] | None = None

        def build(rule: Rule, *args, **kwargs) -> tuple[str, str]:
            nonlocal made
            if made is None:
                made = Rule._compile_builder(rule, append_unknown).__get__(rule, None)
            return made(*args, **kwargs)

        return build
