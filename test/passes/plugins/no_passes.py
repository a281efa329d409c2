"""A plugin that forgot @register_pass."""
from mjax.passes import Pass


class Forgotten(Pass):
    def run(self, module):
        pass
