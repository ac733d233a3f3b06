[
  inputs: ["lib/*.ex", "test/*.exs", "../../kits/elixir/lib/*.ex", "../../kits/elixir/test/*.exs"],
  line_length: 120
]
