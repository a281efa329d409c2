"""What the Pallas kernel lowerings (`--jaxpr-pallas-to-mosaic`, passes/mosaic/, and
`--jaxpr-pallas-to-triton`, passes/triton/) share: the interpreter that lowers a kernel
body op by op through a backend's RuleTable (interpreter.py), the element types and op
views their rules use (types.py), the arith ops of binary primitives (arith.py), the op
families no kernel can hold (unsupported.py), and the layouts and aliases of the custom
call that runs a kernel (custom_call.py).
"""
