from mjax.passes import Pass, register_pass


@register_pass("fails-in-run")
class FailsInRun(Pass):
    """Raise a Python error while running."""

    def run(self, module):
        return {}["missing"]
