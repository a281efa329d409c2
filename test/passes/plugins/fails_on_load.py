from mjax.passes import Pass, register_pass

TABLE = {"a": 1}
SIZE = TABLE["b"]
