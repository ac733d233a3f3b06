%% The worker's time series: a process of its own that emits a sample line
%% (spec/message.schema.json) at start, about once a second, and once more
%% when stopped, so that the series spans the whole measurement, drain
%% included. It runs beside the measurement, never inside its loops: what it
%% costs (a few microseconds a second, msgbench_vm_stats) is the VM's
%% background, not a message's.
-module(msgbench_sampler).

-export([start/2, stop/1]).

%% Emit writes one line; IntervalMs is the time between samples.
-spec start(fun((map()) -> ok), pos_integer()) -> pid().
start(Emit, IntervalMs) ->
    Start = erlang:monotonic_time(),
    %% Normal priority, as the measurement's processes: at high priority the
    %% sampler made short stress runs (msgbench_worker_tests) send nothing in
    %% their window on a loaded machine. Under load it samples late; the
    %% schedule below keeps it from drifting.
    spawn_link(fun() -> loop(Emit, IntervalMs, Start, 1, sample(Emit, Start, undefined)) end).

%% The last sample, then the sampler ends; returns once it is written, so
%% that no sample follows the result.
-spec stop(pid()) -> ok.
stop(Sampler) ->
    Ref = erlang:monitor(process, Sampler),
    Sampler ! {stop, self(), Ref},
    receive
        {Ref, stopped} ->
            erlang:demonitor(Ref, [flush]),
            ok;
        {'DOWN', Ref, process, Sampler, Reason} ->
            exit({sampler_died, Reason})
    end.

%% The N-th sample is due N intervals after the start, so that the series
%% keeps its pace however long each sample takes.
loop(Emit, IntervalMs, Start, N, Scheduler) ->
    Due = Start + erlang:convert_time_unit(N * IntervalMs, millisecond, native),
    Wait = max(0, erlang:convert_time_unit(Due - erlang:monotonic_time(), native, millisecond)),
    receive
        {stop, From, Ref} ->
            _ = sample(Emit, Start, Scheduler),
            unlink(From),
            From ! {Ref, stopped}
    after Wait ->
        loop(Emit, IntervalMs, Start, N + 1, sample(Emit, Start, Scheduler))
    end.

sample(Emit, Start, Scheduler) ->
    {Utilization, Next} = msgbench_vm_stats:scheduler_utilization(Scheduler),
    Ms = erlang:convert_time_unit(erlang:monotonic_time() - Start, native, microsecond) / 1000,
    Values = maps:merge(maps:merge(msgbench_vm_stats:process(), msgbench_vm_stats:runtime()), Utilization),
    ok = Emit(#{type => sample, t_ms => Ms, values => Values}),
    Next.
