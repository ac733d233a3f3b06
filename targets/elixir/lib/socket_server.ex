defmodule MsgbenchEx.SocketServer do
  @moduledoc """
  The socket workload's server half (spec/README.md, "Peers"): reads the request on
  stdin, listens with `{packet, 4}` and passive reads, serves `sockets` connections
  with a Task each (echo: every message back; flow: read and count, then one ACK
  message after the client's FIN, hence `exit_on_close: false`), prints listening
  and served, and halts; it halts too when its stdin closes.
  """
  alias Msgbench.Kit.{Error, Protocol}

  @accept_within_ms 60_000
  @io_idle_ms 60_000

  @spec main() :: no_return()
  def main do
    Protocol.log_to_stderr()

    try do
      request = Protocol.read_request()
      spawn(&halt_at_end_of_stdin/0)
      serve(request)
    rescue
      e -> Protocol.line(Protocol.error_line(e, __STACKTRACE__))
    end

    System.halt(0)
  end

  defp halt_at_end_of_stdin do
    case IO.binread(:stdio, :line) do
      text when is_binary(text) -> halt_at_end_of_stdin()
      _ -> System.halt(0)
    end
  end

  defp serve(%{"workload" => "socket", "params" => p}) do
    mode = if p["data"] == "list", do: :list, else: :binary
    opts = [mode, packet: 4, active: false, nodelay: true, reuseaddr: true, exit_on_close: false, backlog: 1024]

    listener =
      case :gen_tcp.listen(p["port"], opts) do
        {:ok, listener} ->
          listener

        {:error, :eaddrinuse} ->
          Error.resource("port #{p["port"]} is in use: give another, or port = 0 for any free one")

        {:error, reason} ->
          Error.resource("the server cannot listen on port #{p["port"]}: #{inspect(reason)}")
      end

    {:ok, port} = :inet.port(listener)
    Protocol.line(%{type: "listening", port: port})
    flow? = p["mode"] == "flow"

    tasks =
      for k <- 1..p["sockets"] do
        case :gen_tcp.accept(listener, @accept_within_ms) do
          {:ok, socket} ->
            task = Task.async(fn -> serve_connection(socket, flow?, 0, 0) end)
            :ok = :gen_tcp.controlling_process(socket, task.pid)
            task

          {:error, reason} ->
            Error.internal("the server accepted #{k - 1} of #{p["sockets"]} connections: #{inspect(reason)}")
        end
      end

    {messages, bytes} =
      tasks |> Task.await_many(:infinity) |> Enum.reduce({0, 0}, fn {m, b}, {ms, bs} -> {ms + m, bs + b} end)

    Protocol.line(%{type: "served", messages: messages, bytes: bytes})
  end

  defp serve(%{"workload" => other}), do: Error.unsupported("the server half serves workload socket only, not #{other}")

  defp serve_connection(socket, flow?, messages, bytes) do
    case :gen_tcp.recv(socket, 0, @io_idle_ms) do
      {:ok, data} ->
        unless flow?, do: :ok = :gen_tcp.send(socket, data)
        serve_connection(socket, flow?, messages + 1, bytes + IO.iodata_length(data))

      {:error, :closed} ->
        if flow?, do: :gen_tcp.send(socket, <<6>>)
        :gen_tcp.close(socket)
        {messages, bytes}

      {:error, reason} ->
        Error.internal("the server's connection failed: #{inspect(reason)}")
    end
  end
end
