[
  inputs: ["lib/*.ex", "test/*.exs"],
  line_length: 120
]
