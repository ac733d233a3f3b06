defmodule Msgbench.Kit.Peer do
  @moduledoc """
  A workload's server half as a child process (spec/README.md, "Peers"): argv from
  MSGBENCH_PEER_COMMAND (a JSON array) or the worker's own, started through
  `setsid` in a process group of its own, the request written to its stdin, which
  stays open (closing it tells the peer to stop), its stdout read as JSON lines.
  """
  alias Msgbench.Kit.{Error, JSON}

  @exit_within_ms 5000
  @max_line 16 * 1024 * 1024

  defstruct [:port, :os_pid, :who]
  @type t :: %__MODULE__{port: port(), os_pid: non_neg_integer(), who: String.t()}

  @doc "The peer's argv: MSGBENCH_PEER_COMMAND, else `own`."
  @spec argv([String.t()]) :: [String.t()]
  def argv(own) do
    case System.get_env("MSGBENCH_PEER_COMMAND") do
      nil ->
        own

      command ->
        case JSON.decode(command) do
          {:ok, [_ | _] = argv} -> if Enum.all?(argv, &(is_binary(&1) and &1 != "")), do: argv, else: bad(command)
          _ -> bad(command)
        end
    end
  end

  defp bad(command),
    do: Error.internal("MSGBENCH_PEER_COMMAND = #{inspect(command)}: expected a JSON array of strings, a command")

  @spec host() :: charlist()
  def host, do: String.to_charlist(System.get_env("MSGBENCH_PEER_HOST", "127.0.0.1"))

  @doc "Starts the peer and writes `request` (a map) to its stdin as one line."
  @spec start(String.t(), [String.t()], map()) :: t()
  def start(who, argv, request) do
    setsid = System.find_executable("setsid") || Error.internal("setsid (util-linux) is not on PATH")
    cwd = System.get_env("MSGBENCH_PEER_CWD", File.cwd!())

    port =
      Port.open(
        {:spawn_executable, setsid},
        [:binary, :exit_status, {:line, @max_line}, {:args, argv}, {:cd, cwd}]
      )

    {:os_pid, os_pid} = Port.info(port, :os_pid)
    true = Port.command(port, [JSON.encode(request), ?\n])
    %__MODULE__{port: port, os_pid: os_pid, who: "#{who} #{inspect(argv)}"}
  end

  @doc "The next line, which must be of type `want` (an error line is relayed as the worker's own)."
  @spec next(t(), String.t(), timeout()) :: map()
  def next(%__MODULE__{port: port, who: who}, want, timeout_ms) do
    receive do
      {^port, {:data, {:eol, ""}}} ->
        next(%__MODULE__{port: port, who: who}, want, timeout_ms)

      {^port, {:data, {:eol, text}}} ->
        case JSON.decode(text) do
          {:ok, %{"type" => ^want} = line} -> line
          {:ok, %{"type" => "error", "kind" => kind, "message" => m}} -> relay(kind, m)
          {:ok, %{"type" => other}} -> Error.internal("#{who} said #{other} where #{want} was due")
          _ -> Error.internal("#{who} printed #{inspect(String.slice(text, 0, 200))} where #{want} was due")
        end

      {^port, {:exit_status, status}} ->
        Error.internal("#{who} exited without saying #{want} (exit status #{status})")
    after
      timeout_ms -> Error.internal("#{who} did not say #{want} within #{timeout_ms} ms")
    end
  end

  defp relay(kind, message) when kind in ["unsupported", "resource", "internal"],
    do: raise(Error.new(String.to_existing_atom(kind), "the server half: #{message}"))

  defp relay(_, message), do: Error.internal("the server half: #{message}")

  @doc "Closes the peer's stdin, gives it #{@exit_within_ms} ms to exit, then kills its process group."
  @spec stop(t()) :: :ok
  def stop(%__MODULE__{port: port, os_pid: os_pid}) do
    receive do
      {^port, {:exit_status, _}} -> :ok
    after
      0 ->
        Port.close(port)
        unless gone_within?(os_pid, @exit_within_ms), do: System.cmd("kill", ["-KILL", "--", "-#{os_pid}"])
        :ok
    end
  end

  defp gone_within?(os_pid, ms) do
    cond do
      not File.exists?("/proc/#{os_pid}") or zombie?(os_pid) ->
        true

      ms <= 0 ->
        false

      true ->
        Process.sleep(20)
        gone_within?(os_pid, ms - 20)
    end
  end

  defp zombie?(os_pid) do
    case File.read("/proc/#{os_pid}/stat") do
      {:ok, stat} -> stat |> String.split(") ") |> List.last() |> String.starts_with?("Z")
      _ -> true
    end
  end
end
