defmodule MsgbenchEx.Chat.Client do
  @moduledoc """
  A chat client: a Task that drives its user and listens for deliveries. Stress
  (think_ms = 0): send, listen listener_delay_ms (0: take what is there), again;
  realistic: one send every think_ms from a random phase, listening in between. It
  stops sending when the run's stop flag is up, keeps counting deliveries through
  the drain, and returns its counts (the Task's result) when told `:report`.
  """
  alias Msgbench.Kit.{Histogram, Measure}
  alias MsgbenchEx.Chat.User

  @sentence "I've been mad for fucking years\u2014absolutely years"
  @sent 1
  @received 2

  @spec sentence() :: String.t()
  def sentence, do: @sentence

  @spec run(map()) :: map()
  def run(setup) do
    state = Map.merge(setup, %{sent: 0, received: 0, in_window: 0, cross_group: 0, self: 0, latency: %Histogram{}})

    receive do
      :go -> :ok
    end

    if setup.think_ms == 0 do
      stress(state)
    else
      realistic(state, Measure.now_ns() + :rand.uniform(setup.think_ms * 1_000_000))
    end
  end

  defp stopped?(state), do: :atomics.get(state.stop, 1) == 1

  defp stress(state) do
    if stopped?(state) do
      listen(state, :infinity).report
    else
      state = send_one(state)
      state = listen(state, Measure.now_ns() + state.listener_delay_ms * 1_000_000)
      stress(state)
    end
  end

  defp realistic(state, next_ns) do
    state = listen(state, next_ns)

    cond do
      Map.has_key?(state, :report) -> state.report
      stopped?(state) -> listen(state, :infinity).report
      true -> realistic(send_one(state), next_ns + state.think_ms * 1_000_000)
    end
  end

  defp send_one(state) do
    now = Measure.now_ns()
    body = if state.binary?, do: :erlang.term_to_binary({@sentence, :os.timestamp()}), else: @sentence
    User.chat(state.user, {state.group, state.id, now, body})
    :counters.add(state.counts, @sent, 1)
    %{state | sent: state.sent + 1}
  end

  # Takes deliveries until until_ns (a monotonic time; :infinity: until the report is asked).
  defp listen(state, until_ns) do
    timeout = if until_ns == :infinity, do: :infinity, else: max(0, div(until_ns - Measure.now_ns(), 1_000_000))

    receive do
      {:delivery, message} -> state |> record(message) |> listen(until_ns)
      :report -> Map.put(state, :report, Map.take(state, [:sent, :received, :in_window, :cross_group, :self, :latency]))
    after
      timeout -> state
    end
  end

  defp record(state, {group, id, sent_ns, _body}) do
    :counters.add(state.counts, @received, 1)

    %{
      state
      | received: state.received + 1,
        in_window: state.in_window + if(stopped?(state), do: 0, else: 1),
        cross_group: state.cross_group + if(group == state.group, do: 0, else: 1),
        self: state.self + if(id == state.id, do: 1, else: 0),
        latency: Histogram.record(state.latency, Measure.now_ns() - sent_ns)
    }
  end

  @spec counters() :: :counters.counters_ref()
  def counters, do: :counters.new(2, [:write_concurrency])

  @spec totals(:counters.counters_ref()) :: {non_neg_integer(), non_neg_integer()}
  def totals(counts), do: {:counters.get(counts, @sent), :counters.get(counts, @received)}
end
