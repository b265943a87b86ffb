"""Rule options as a designer reads them in the form: a label and one line of help, the spec
reference (description) and ASSUMPTION mark kept behind them."""
import pytest

import core_cy


@pytest.mark.parametrize("name", core_cy.game_names())
def test_every_rule_option_has_a_label_and_one_line_help(name):
    game = core_cy.load(name)
    labels = [o.label for o in game.options]
    assert len(set(labels)) == len(labels), "two options of one game read alike"
    for option in game.options:
        assert option.label and "_" not in option.label and option.label[0].isupper(), option
        assert option.help and "\n" not in option.help and len(option.help) <= 160, option
        assert option.help.endswith("."), option
        schema = game.info()["rules"]["properties"][option.name]
        assert schema["title"] == option.label and schema["x-help"] == option.help
        assert schema["description"] == option.description  # the spec reference stays
