%% Clocks and resource accounting shared by the workloads: raw facts only,
%% every derived figure is the harness's.
%%
%% Wall time comes from the VM's monotonic clock in nanoseconds; CPU time
%% from statistics(runtime), the user+system time of every thread of the VM
%% process (the VM reports it in whole milliseconds; it is passed on in ns);
%% peak memory from the kernel's own high-water mark of the process.
-module(msgbench_measure).

-export([now/0, cpu_ns/0, peak_rss_bytes/0, available_bytes/0]).

-export_type([instant/0]).

-type instant() :: integer().   % erlang:monotonic_time(nanosecond)

-spec now() -> instant().
now() -> erlang:monotonic_time(nanosecond).

%% CPU time of the whole VM process so far, in nanoseconds (millisecond
%% resolution: statistics(runtime) counts whole milliseconds).
-spec cpu_ns() -> non_neg_integer().
cpu_ns() ->
    {TotalMs, _SinceLastCall} = statistics(runtime),
    TotalMs * 1000000.

%% VmHWM from /proc/self/status (the kernel reports it in kB).
-spec peak_rss_bytes() -> non_neg_integer().
peak_rss_bytes() ->
    {ok, Status} = file:read_file("/proc/self/status"),
    {match, [Kb]} = re:run(Status, "^VmHWM:\\s+(\\d+)\\s+kB", [multiline, {capture, all_but_first, binary}]),
    binary_to_integer(Kb) * 1024.

%% MemAvailable from /proc/meminfo, or unknown where there is none.
-spec available_bytes() -> non_neg_integer() | unknown.
available_bytes() ->
    case file:read_file("/proc/meminfo") of
        {ok, Text} ->
            case re:run(Text, "^MemAvailable:\\s+(\\d+)\\s+kB", [multiline, {capture, all_but_first, binary}]) of
                {match, [Kb]} -> binary_to_integer(Kb) * 1024;
                nomatch -> unknown
            end;
        {error, _} ->
            unknown
    end.
