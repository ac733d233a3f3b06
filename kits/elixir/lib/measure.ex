defmodule Msgbench.Kit.Measure do
  @moduledoc """
  Clocks and memory as the protocol wants them: the VM's monotonic clock in ns,
  the whole VM's CPU time (`statistics(:runtime)`: every scheduler and thread,
  whole milliseconds), peak and current RSS from /proc/self/status.
  """

  @spec now_ns() :: integer()
  def now_ns, do: System.monotonic_time(:nanosecond)

  @spec cpu_ns() :: non_neg_integer()
  def cpu_ns do
    {total_ms, _} = :erlang.statistics(:runtime)
    total_ms * 1_000_000
  end

  @spec peak_rss_bytes() :: non_neg_integer()
  def peak_rss_bytes, do: status_kib("VmHWM") * 1024

  @spec rss_bytes() :: non_neg_integer()
  def rss_bytes, do: status_kib("VmRSS") * 1024

  defp status_kib(field, path \\ "/proc/self/status") do
    [_, kib] = Regex.run(~r/^#{field}:\s+(\d+) kB/m, File.read!(path))
    String.to_integer(kib)
  end

  @doc "Elixir's and OTP's versions, for the hello line."
  @spec runtime_version() :: String.t()
  def runtime_version do
    "Elixir #{System.version()} / OTP #{System.otp_release()} / erts-#{:erlang.system_info(:version)}"
  end
end
