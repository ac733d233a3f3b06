%% The VM's own view of itself, as numbers with units in their names (the
%% sample lines of spec/message.schema.json, and the chat server's stats in
%% docs/chat-server.md): the kernel's RSS, the VM's CPU, erlang:memory/0 by
%% kind, garbage collections and the words they reclaimed, IO bytes, process
%% and port counts, scheduler utilisation.
%%
%% Every call here reads counters the VM keeps anyway; none walks the
%% processes, so a sample costs microseconds however many processes run.
-module(msgbench_vm_stats).

-export([process/0, runtime/0, scheduler_utilization/1, rss_bytes/0]).

-export_type([values/0]).

-type values() :: #{binary() => number()}.

%% The process as the kernel sees it: RSS now and at its peak, CPU so far.
-spec process() -> values().
process() ->
    {Rss, Peak} = rss_bytes(),
    #{<<"rss_bytes">> => Rss, <<"peak_rss_bytes">> => Peak, <<"cpu_ns">> => msgbench_measure:cpu_ns()}.

%% The runtime's own view: erlang_memory_<kind>_bytes for every kind of
%% erlang:memory/0, GC count and words reclaimed, IO bytes in and out, the
%% processes, ports and run queue now.
-spec runtime() -> values().
runtime() ->
    Memory = maps:from_list([{iolist_to_binary(["erlang_memory_", atom_to_binary(Kind), "_bytes"]), Bytes}
                             || {Kind, Bytes} <- erlang:memory()]),
    {GcCount, WordsReclaimed, 0} = statistics(garbage_collection),
    {{input, In}, {output, Out}} = statistics(io),
    Memory#{<<"erlang_gc_count">> => GcCount,
            <<"erlang_gc_words_reclaimed_count">> => WordsReclaimed,
            <<"erlang_io_in_bytes">> => In,
            <<"erlang_io_out_bytes">> => Out,
            <<"erlang_processes_count">> => erlang:system_info(process_count),
            <<"erlang_ports_count">> => erlang:system_info(port_count),
            <<"erlang_run_queue_count">> => statistics(total_run_queue_lengths_all)}.

%% The schedulers' utilisation (all of them, normal, dirty CPU and dirty IO)
%% since Since, as a percent, and the sample to measure the next one from.
%% The first scheduler:sample/0 turns on scheduler_wall_time, which costs the
%% schedulers a clock reading at each switch between work and sleep.
-spec scheduler_utilization(scheduler:sched_sample() | undefined) -> {values(), scheduler:sched_sample()}.
scheduler_utilization(undefined) ->
    {#{}, scheduler:sample()};
scheduler_utilization(Since) ->
    Now = scheduler:sample(),
    {total, Share, _Percent} = lists:keyfind(total, 1, scheduler:utilization(Since, Now)),
    {#{<<"scheduler_utilization_percent">> => Share * 100}, Now}.

%% VmRSS and VmHWM from /proc/self/status (the kernel reports them in kB).
-spec rss_bytes() -> {non_neg_integer(), non_neg_integer()}.
rss_bytes() ->
    {ok, Status} = file:read_file("/proc/self/status"),
    {kb(Status, "VmRSS"), kb(Status, "VmHWM")}.

kb(Status, Field) ->
    {match, [Kb]} = re:run(Status, ["^", Field, ":\\s+(\\d+)\\s+kB"], [multiline, {capture, all_but_first, binary}]),
    binary_to_integer(Kb) * 1024.
