"""The app's URL rules make their URL builders on first use: matching is as before, and building a URL still works
(inbox_http/url_rules.py)."""

from inbox_http.app import create_app
from inbox_http.url_rules import RuleBuiltOnDemand


def test_every_rule_is_built_on_demand_and_builds_the_url_it_matches():
    app = create_app(None)
    rules = [rule for rule in app.url_map.iter_rules() if rule.endpoint != "static"]
    assert rules and all(isinstance(rule, RuleBuiltOnDemand) for rule in rules)
    urls = app.url_map.bind("localhost")
    assert urls.match("/app/chats/919800000001") == ("web_chats.chat", {"phone": "919800000001"})
    assert urls.build("web_chats.chat", {"phone": "919800000001"}) == "/app/chats/919800000001"
    assert urls.build("web_chats.chat", {"phone": "919800000002", "done": "reply"}) == \
        "/app/chats/919800000002?done=reply"
