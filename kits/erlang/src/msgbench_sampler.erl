%% The worker's time series: a process of its own that emits a sample line
%% (spec/message.schema.json) at start, about once a second, and a last one
%% when the workload says its drain is over (last/0; chat, before it tears
%% its processes down) or else when stopped, so that the series spans the
%% whole measurement, drain included. It runs beside the measurement, never inside its loops: what it
%% costs (a few microseconds a second, msgbench_vm_stats) is the VM's
%% background, not a message's.
-module(msgbench_sampler).

-export([start/2, last/0, stop/1]).

%% Emit writes one line; IntervalMs is the time between samples.
-spec start(fun((map()) -> ok), pos_integer()) -> pid().
start(Emit, IntervalMs) ->
    Start = erlang:monotonic_time(),
    %% Normal priority, as the measurement's processes: at high priority the
    %% sampler made short stress runs (msgbench_worker_tests) send nothing in
    %% their window on a loaded machine. Under load it samples late; the
    %% schedule below keeps it from drifting.
    spawn_link(fun() ->
                       register(?MODULE, self()),
                       loop(Emit, IntervalMs, Start, 1, sample(Emit, Start, undefined))
               end).

%% The last sample, now (the measurement is over); returns once it is
%% written. Nothing happens without a sampler (a workload run by a test).
-spec last() -> ok.
last() ->
    case whereis(?MODULE) of
        undefined -> ok;
        Sampler -> call(Sampler, last)
    end.

%% The last sample, then the sampler ends; returns once it is written, so
%% that no sample follows the result.
-spec stop(pid()) -> ok.
stop(Sampler) ->
    call(Sampler, stop).

call(Sampler, Request) ->
    Ref = erlang:monitor(process, Sampler),
    Sampler ! {Request, self(), Ref},
    receive
        {Ref, done} ->
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
        {last, From, Ref} ->
            _ = sample(Emit, Start, Scheduler),
            From ! {Ref, done},
            stopped();
        {stop, From, Ref} ->
            _ = sample(Emit, Start, Scheduler),
            done(From, Ref)
    after Wait ->
        loop(Emit, IntervalMs, Start, N + 1, sample(Emit, Start, Scheduler))
    end.

%% After the last sample: nothing more until stop.
stopped() ->
    receive
        {stop, From, Ref} -> done(From, Ref);
        {last, From, Ref} -> From ! {Ref, done}, stopped()
    end.

done(From, Ref) ->
    unregister(?MODULE),
    unlink(From),
    From ! {Ref, done}.

sample(Emit, Start, Scheduler) ->
    {Utilization, Next} = msgbench_vm_stats:scheduler_utilization(Scheduler),
    Ms = erlang:convert_time_unit(erlang:monotonic_time() - Start, native, microsecond) / 1000,
    Values = maps:merge(maps:merge(msgbench_vm_stats:process(), msgbench_vm_stats:runtime()), Utilization),
    ok = Emit(#{type => sample, t_ms => Ms, values => Values}),
    Next.
