defmodule Msgbench.Kit.Protocol do
  @moduledoc """
  The worker side of the worker protocol (spec/README.md): one JSON request on
  stdin, JSON lines on stdout (logs go to stderr). `serve/1` is a worker's main.
  """
  alias Msgbench.Kit.{Error, JSON}

  @doc "Writes one JSON line to stdout."
  @spec line(map()) :: :ok
  def line(value), do: IO.binwrite(:stdio, [JSON.encode(value), ?\n])

  @doc "Reads the request line from stdin and decodes it."
  @spec read_request() :: map()
  def read_request do
    case IO.binread(:stdio, :line) do
      text when is_binary(text) -> parse_request(text)
      other -> Error.internal("stdin ended before the request line (#{inspect(other)})")
    end
  end

  @spec parse_request(binary()) :: map()
  def parse_request(text) do
    case JSON.decode(text) do
      {:ok, %{"workload" => w} = request} when is_binary(w) ->
        Map.merge(%{"options" => %{}, "params" => %{}, "variant" => "unknown"}, request)

      {:ok, _} ->
        Error.internal("the request has no workload: #{String.slice(text, 0, 200)}")

      {:error, reason} ->
        Error.internal("the request is not JSON (#{reason}): #{String.slice(text, 0, 200)}")
    end
  end

  @doc "The error line of an exception: an Error as it is, anything else internal."
  @spec error_line(Exception.t(), list()) :: map()
  def error_line(%Error{kind: kind, message: message}, _stack), do: %{type: "error", kind: kind, message: message}

  def error_line(exception, stack),
    do: %{type: "error", kind: "internal", message: Exception.format(:error, exception, stack)}

  @doc """
  Runs one measurement: logs to stderr, reads the request, says hello, runs the
  workload's function `(request -> %{measured:, verify:, histograms:})` and
  writes its result or the error it raised, then halts with status 0.
  """
  @spec serve(String.t(), %{String.t() => (map() -> map())}) :: no_return()
  def serve(target, workloads) do
    log_to_stderr()
    version = Msgbench.Kit.Measure.runtime_version()

    {request, failure} =
      try do
        {read_request(), nil}
      rescue
        e -> {%{"variant" => "unknown"}, error_line(e, __STACKTRACE__)}
      end

    line(%{type: "hello", target: target, runtime_version: version, variant: request["variant"]})
    line(failure || run_apart(target, workloads, request))
    System.halt(0)
  end

  # The measurement runs in a process of its own: a Task it links to that crashes takes
  # that process down, and its exit reason still becomes the error line.
  defp run_apart(target, workloads, request) do
    parent = self()
    {pid, ref} = spawn_monitor(fn -> send(parent, {:measured, self(), run(target, workloads, request)}) end)

    receive do
      {:measured, ^pid, line} ->
        Process.demonitor(ref, [:flush])
        line

      {:DOWN, ^ref, :process, ^pid, {%Error{} = e, _stack}} ->
        error_line(e, [])

      {:DOWN, ^ref, :process, ^pid, reason} ->
        %{type: "error", kind: "internal", message: "the measurement died: #{Exception.format_exit(reason)}"}
    end
  end

  defp run(target, workloads, request) do
    case Map.fetch(workloads, request["workload"]) do
      {:ok, measure} ->
        result = measure.(request)
        Map.merge(%{type: "result"}, Map.take(result, [:measured, :verify, :histograms]))

      :error ->
        names = workloads |> Map.keys() |> Enum.sort() |> Enum.join(", ")
        error_line(Error.new(:unsupported, "#{target} implements #{names}, not #{request["workload"]}"), [])
    end
  rescue
    e -> error_line(e, __STACKTRACE__)
  end

  @doc "Sends Logger's output (and OTP's reports through it) to stderr: stdout is the protocol's."
  @spec log_to_stderr() :: :ok
  def log_to_stderr do
    _ = Logger.configure_backend(:console, device: :standard_error)
    :ok
  end
end
