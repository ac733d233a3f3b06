-module(msgbench_ring_tests).

-include_lib("eunit/include/eunit.hrl").

%% The ring runs in a process of its own, as the worker runs it.
run(N, M, Payload) ->
    Self = self(),
    Pid = spawn(fun() -> Self ! {self(), msgbench_ring:run(N, M, Payload)} end),
    receive {Pid, Result} -> Result end.

counts_test() ->
    ?assertMatch(#{hops := 50, laps := 5, links := 10}, run(10, 5, "BOO!")).

smallest_ring_test() ->
    ?assertMatch(#{hops := 2, laps := 1, links := 2}, run(2, 1, "BOO!")).

one_lap_test() ->
    ?assertMatch(#{hops := 1000, laps := 1, links := 1000}, run(1000, 1, "")).

any_payload_travels_test() ->
    Payload = lists:duplicate(1000, $x),
    ?assertMatch(#{hops := 300, laps := 3, links := 100}, run(100, 3, Payload)).

%% Raw facts only: wall and CPU times of each phase in ns.
times_test() ->
    Result = run(100, 10, "BOO!"),
    ?assertEqual(lists:sort([create_wall_ns, create_cpu_ns, pass_wall_ns, pass_cpu_ns,
                             hops, laps, links]),
                 lists:sort(maps:keys(Result))),
    [?assert(is_integer(maps:get(Key, Result)) andalso maps:get(Key, Result) > 0)
     || Key <- [create_wall_ns, pass_wall_ns]],
    [?assert(is_integer(maps:get(Key, Result)) andalso maps:get(Key, Result) >= 0)
     || Key <- [create_cpu_ns, pass_cpu_ns]].

the_ring_tears_itself_down_test() ->
    Before = erlang:system_info(process_count),
    _ = run(500, 2, "BOO!"),
    ?assert(wait_for_process_count(Before, 100)).

wait_for_process_count(Count, Tries) ->
    case erlang:system_info(process_count) =< Count of
        true -> true;
        false when Tries > 0 -> timer:sleep(10), wait_for_process_count(Count, Tries - 1);
        false -> false
    end.
