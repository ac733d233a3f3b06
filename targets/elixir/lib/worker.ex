defmodule MsgbenchEx.Worker do
  @moduledoc "The Elixir worker: one measurement per VM (spec/README.md)."
  alias Msgbench.Kit.Protocol

  @spec main() :: no_return()
  def main do
    Protocol.serve("elixir", %{
      "ring" => &MsgbenchEx.Ring.measure/1,
      "fanin" => &MsgbenchEx.Fanin.measure/1,
      "socket" => &MsgbenchEx.Socket.measure/1,
      "chat" => &MsgbenchEx.Chat.measure/1
    })
  end
end
