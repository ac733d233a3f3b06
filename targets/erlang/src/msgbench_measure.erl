%% Clocks and resource accounting shared by the workloads.
%%
%% Wall time comes from the VM's monotonic clock in native units (converted
%% only when a result is reported); CPU time from statistics(runtime), the
%% user+system time of every thread of the VM process; peak memory from the
%% kernel's own high-water mark of the process.
-module(msgbench_measure).

-export([now/0, cpu_ms/0, elapsed_ms/2, per_second/3, peak_rss_bytes/0, available_bytes/0]).

-export_type([instant/0]).

-type instant() :: integer().   % erlang:monotonic_time() in native units

-spec now() -> instant().
now() -> erlang:monotonic_time().

%% CPU time of the whole VM process so far, in milliseconds.
-spec cpu_ms() -> non_neg_integer().
cpu_ms() ->
    {Total, _SinceLastCall} = statistics(runtime),
    Total.

-spec elapsed_ms(instant(), instant()) -> float().
elapsed_ms(From, To) ->
    erlang:convert_time_unit(To - From, native, nanosecond) / 1.0e6.

%% Count events per second of the interval; the interval is never taken as
%% shorter than a nanosecond, so a rate is always a finite number.
-spec per_second(non_neg_integer(), instant(), instant()) -> float().
per_second(Count, From, To) ->
    Seconds = max(erlang:convert_time_unit(To - From, native, nanosecond), 1) / 1.0e9,
    Count / Seconds.

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
