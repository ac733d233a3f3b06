defmodule MsgbenchEx.ChatServer do
  @moduledoc """
  The chat server kind's server (docs/chat-server.md): WebSocket over `:gen_tcp`
  (`MsgbenchEx.WebSocket`), a process per connection (`MsgbenchEx.ChatServer.Connection`,
  the user, holding its history) and a GenServer per group
  (`MsgbenchEx.ChatServer.Room`, found through a Registry, started under a
  DynamicSupervisor on the first join). Usage: ./chat-server [VM args] --listen HOST:PORT
  """
  alias Msgbench.Kit.Protocol
  alias MsgbenchEx.ChatServer.Connection

  @spec main() :: no_return()
  def main do
    Protocol.log_to_stderr()
    {ip, port} = parse_listen(System.argv())
    {:ok, _} = Registry.start_link(keys: :unique, name: MsgbenchEx.ChatServer.Rooms)
    {:ok, _} = DynamicSupervisor.start_link(strategy: :one_for_one, name: MsgbenchEx.ChatServer.RoomSupervisor)
    :persistent_term.put(:msgbench_connections, :counters.new(1, [:write_concurrency]))

    opts = [:binary, ip: ip, packet: :raw, active: false, reuseaddr: true, backlog: 4096, nodelay: true]

    case :gen_tcp.listen(port, opts) do
      {:ok, listener} ->
        {:ok, bound} = :inet.port(listener)
        Protocol.line(%{listening: bound})
        spawn_link(fn -> accept(listener) end)
        halt_at_end_of_stdin()

      {:error, reason} ->
        IO.puts(:stderr, "chat-server: cannot listen on port #{port}: #{inspect(reason)}")
        System.halt(1)
    end
  end

  defp parse_listen(["--listen", address | _]) do
    with [host, port] <- String.split(address, ":", parts: 2),
         {port, ""} when port in 0..65535 <- Integer.parse(port),
         {:ok, ip} <- :inet.parse_address(String.to_charlist(host)) do
      {ip, port}
    else
      _ -> usage("--listen #{address}: expected HOST:PORT (HOST an IPv4 address, PORT 0..65535; 0 picks a free one)")
    end
  end

  defp parse_listen([_ | rest]), do: parse_listen(rest)
  defp parse_listen([]), do: usage("expected --listen HOST:PORT")

  defp usage(message) do
    IO.puts(:stderr, "chat-server: #{message}")
    System.halt(2)
  end

  defp accept(listener) do
    case :gen_tcp.accept(listener) do
      {:ok, socket} ->
        {:ok, pid} = Connection.start(socket)
        :ok = :gen_tcp.controlling_process(socket, pid)
        send(pid, :handshake)
        accept(listener)

      {:error, reason} when reason in [:emfile, :enfile] ->
        IO.puts(:stderr, "chat-server: accept: #{reason} (out of file descriptors)")
        Process.sleep(10)
        accept(listener)

      {:error, reason} ->
        IO.puts(:stderr, "chat-server: accept failed: #{inspect(reason)}")
        System.halt(1)
    end
  end

  defp halt_at_end_of_stdin do
    case IO.binread(:stdio, :line) do
      text when is_binary(text) -> halt_at_end_of_stdin()
      _ -> System.halt(0)
    end
  end
end
