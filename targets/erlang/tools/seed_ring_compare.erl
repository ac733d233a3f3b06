%% Driven by seed_ring_compare.sh: runs the seed's ring_benchmark:start(N, M)
%% (extracted from the seed document at run time) and msgbench_ring:run/3 in
%% the same VM, alternately, and prints the passing phase of each.
%%
%% The seed reports its own times on standard output, in milliseconds, from
%% statistics(wall_clock) and statistics(runtime); its output is captured by
%% a small I/O server and those figures are read back, so the seed is timed
%% exactly as it times itself. Ours is timed by msgbench_ring itself.
-module(seed_ring_compare).

-export([main/1]).

%% The seed's token, as in its start/2.
-define(PAYLOAD, "BOO!").

%% A pause before each run: the previous ring's processes are freed
%% asynchronously, and that work should not land in the next run.
-define(SETTLE_MS, 50).

-spec main([string()]) -> no_return().
main([NArg, MArg, RunsArg]) ->
    N = list_to_integer(NArg),
    M = list_to_integer(MArg),
    Runs = list_to_integer(RunsArg),
    io:format("ring N=~w M=~w, ~w runs each after one warm-up, alternating; "
              "~w scheduler(s)~n", [N, M, Runs, erlang:system_info(schedulers_online)]),
    _ = seed_pass(N, M),
    _ = our_pass(N, M),
    Results = [run_pair(Run, N, M) || Run <- lists:seq(1, Runs)],
    io:format("~-6s ~16s ~16s ~16s ~16s~n",
              ["run", "seed pass ms", "ours pass ms", "seed cpu ms", "ours cpu ms"]),
    [io:format("~-6w ~16.1f ~16.1f ~16w ~16w~n", [Run, SeedMs, OurMs, SeedCpu, OurCpu])
     || {Run, {SeedMs, SeedCpu}, {OurMs, OurCpu}} <- Results],
    SeedMedian = median([SeedMs || {_, {SeedMs, _}, _} <- Results]),
    OurMedian = median([OurMs || {_, _, {OurMs, _}} <- Results]),
    Hops = N * M,
    SeedCpuMedian = median([SeedCpu || {_, {_, SeedCpu}, _} <- Results]),
    OurCpuMedian = median([OurCpu || {_, _, {_, OurCpu}} <- Results]),
    OursNotSlower = length([Run || {Run, {SeedMs, _}, {OurMs, _}} <- Results, OurMs =< SeedMs]),
    io:format("median pass ms:  seed ~.1f  ours ~.1f~n", [SeedMedian, OurMedian]),
    io:format("median pass cpu ms: seed ~w  ours ~w~n", [SeedCpuMedian, OurCpuMedian]),
    io:format("runs where ours was at least as fast: ~w of ~w~n", [OursNotSlower, Runs]),
    io:format("median hops/s:   seed ~w  ours ~w  (ours/seed ~.3f)~n",
              [round(Hops / (SeedMedian / 1000)), round(Hops / (OurMedian / 1000)),
               SeedMedian / OurMedian]),
    halt(0).

%% Odd runs start with the seed, even ones with ours, so that drift in a
%% noisy machine does not favour either.
run_pair(Run, N, M) when Run rem 2 =:= 1 ->
    Seed = seed_pass(N, M),
    Ours = our_pass(N, M),
    {Run, Seed, Ours};
run_pair(Run, N, M) ->
    Ours = our_pass(N, M),
    Seed = seed_pass(N, M),
    {Run, Seed, Ours}.

%% {wall ms, cpu ms} of the passing phase, each run in a fresh process,
%% through the worker's own path (the payload arrives as JSON text does).
our_pass(N, M) ->
    Request = #{<<"params">> => #{<<"n">> => N, <<"m">> => M,
                                  <<"payload">> => list_to_binary(?PAYLOAD)}},
    {ok, Options} = msgbench_options:read(msgbench_erlang_options, #{}),
    {ok, Config} = msgbench_ring_workload:configure(Request, Options),
    {ok, #{measured := #{pass_wall_ns := WallNs, pass_cpu_ns := CpuNs}}} =
        in_fresh_process(fun() -> msgbench_ring_workload:measure(Config) end),
    {WallNs / 1.0e6, CpuNs div 1000000}.

seed_pass(N, M) ->
    Capture = spawn_link(fun() -> capture([]) end),
    ok = in_fresh_process(fun() ->
                                  group_leader(Capture, self()),
                                  ring_benchmark:start(N, M)
                          end),
    kill_seed_ring(),
    Capture ! {output, self()},
    Output = receive {output, Text} -> Text end,
    {match, [Wall]} = re:run(Output, "Elapse Time \\(sending message\\) = (\\d+) ms",
                             [{capture, all_but_first, list}]),
    {match, [Cpu]} = re:run(Output, "CPU Time \\(sending message\\) = (\\d+) ms",
                            [{capture, all_but_first, list}]),
    {float(list_to_integer(Wall)), list_to_integer(Cpu)}.

%% The seed's links forward forever and never exit: end them, or the next
%% runs would find the process table full.
kill_seed_ring() ->
    Links = [Pid || Pid <- processes(),
                    process_info(Pid, initial_call) =:= {initial_call, {ring_benchmark, newLink, 3}}],
    Monitors = [monitor(process, Pid) || Pid <- Links],
    [exit(Pid, kill) || Pid <- Links],
    [receive {'DOWN', Monitor, process, _, _} -> ok end || Monitor <- Monitors],
    ok.

in_fresh_process(Fun) ->
    %% Let the last run's processes be freed before the next one starts.
    erlang:garbage_collect(),
    timer:sleep(?SETTLE_MS),
    {Pid, Monitor} = spawn_monitor(fun() -> exit({done, Fun()}) end),
    receive
        {'DOWN', Monitor, process, Pid, {done, Result}} -> Result;
        {'DOWN', Monitor, process, Pid, Reason} -> error(Reason)
    end.

%% Just enough of an I/O server to collect what io:format writes.
capture(Acc) ->
    receive
        {io_request, From, ReplyAs, Request} ->
            {Reply, Text} = io_request(Request),
            From ! {io_reply, ReplyAs, Reply},
            capture([Acc, Text]);
        {output, To} ->
            To ! {output, unicode:characters_to_list(Acc)}
    end.

io_request({put_chars, Encoding, Chars}) ->
    {ok, unicode:characters_to_binary(Chars, Encoding)};
io_request({put_chars, Encoding, Module, Function, Args}) ->
    {ok, unicode:characters_to_binary(apply(Module, Function, Args), Encoding)};
io_request({requests, Requests}) ->
    Results = [io_request(Request) || Request <- Requests],
    {ok, [Text || {_, Text} <- Results]};
io_request(_Other) ->
    {{error, request}, <<>>}.

median(Values) ->
    Sorted = lists:sort(Values),
    Length = length(Sorted),
    case Length rem 2 of
        1 -> lists:nth(Length div 2 + 1, Sorted);
        0 -> (lists:nth(Length div 2, Sorted) + lists:nth(Length div 2 + 1, Sorted)) / 2
    end.
