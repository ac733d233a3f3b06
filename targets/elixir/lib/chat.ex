defmodule MsgbenchEx.Chat do
  @moduledoc false
  @spec measure(map()) :: map()
  def measure(_), do: Msgbench.Kit.Error.unsupported("not yet")
end
