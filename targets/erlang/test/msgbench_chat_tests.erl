-module(msgbench_chat_tests).

-include_lib("eunit/include/eunit.hrl").

ms(Ms) -> erlang:convert_time_unit(Ms, millisecond, native).

config(Overrides) ->
    maps:merge(#{groups => 2, clients_per_group => 3, duration => ms(100), think => 0,
                 message_queue_data => off_heap, yield => false,
                 listener_delay => 0, message => text, history => 10,
                 drain_timeout => ms(5000), memory_limit_bytes => infinity},
               Overrides).

%% run/1 traps exits and links to the tree: a process of its own.
run(Config) ->
    Self = self(),
    Pid = spawn(fun() -> Self ! {self(), msgbench_chat:run(Config)} end),
    receive {Pid, Result} -> Result end.

%% The spec's verify rules, and the history bound.
check(#{groups := G, clients_per_group := CPG, history := History}, Run) ->
    #{sent := Sent, received := Received, cross_group := Cross, self_deliveries := Self,
      users := Users, stored := Stored, max_held := MaxHeld, received_in_window := InWindow,
      latency_samples := Samples} = Run,
    ?assert(Sent > 0),
    ?assertEqual(Sent, Received),
    ?assertEqual(0, Cross),
    ?assertEqual(0, Self),
    ?assertEqual(G * CPG, Users),
    %% Every delivery was kept by its user on the way, and timed by its client.
    ?assertEqual(Received, Stored),
    ?assertEqual(Received, Samples),
    ?assert(InWindow =< Received),
    ?assert(MaxHeld =< History),
    Run.

stress_test() ->
    Config = config(#{}),
    {ok, Run} = run(Config),
    Run = check(Config, Run),
    #{send_window := Window, latency_p50 := P50, latency_p99 := P99, latency_max := Max,
      processes := Processes, max_held := MaxHeld} = Run,
    ?assert(Window >= ms(100)),
    ?assert(P50 =< P99 andalso P99 =< Max),
    ?assertEqual(2 * (2 * 3 + 1) + 3, Processes),
    %% Thousands of deliveries each (unless the machine stalled us for the
    %% whole run): histories fill up, and no more.
    #{sent := Sent} = Run,
    ?assert(MaxHeld =:= 10 orelse Sent < 100).

stress_with_listener_delay_test() ->
    Config = config(#{listener_delay => ms(1), groups => 3, clients_per_group => 2}),
    {ok, Run} = run(Config),
    check(Config, Run).

binary_message_test() ->
    Config = config(#{message => binary, history => 3}),
    {ok, Run} = run(Config),
    ?assertMatch(#{max_held := 3}, check(Config, Run)).

no_history_test() ->
    Config = config(#{history => 0}),
    {ok, Run} = run(Config),
    ?assertMatch(#{max_held := 0}, check(Config, Run)).

%% Think 50 ms over 200 ms: the first send at a phase in [0, 50), then one
%% every 50 ms while before T: exactly 4 per client, whatever the phase.
realistic_test() ->
    Config = config(#{think => ms(50), duration => ms(200), groups => 3, clients_per_group => 4}),
    {ok, Run} = run(Config),
    Run = check(Config, Run),
    #{sent := Sent, received_in_window := InWindow} = Run,
    ?assertEqual(4 * 12, Sent),
    %% Light load: most arrives before T (not all: a send due just before T
    %% is delivered after it, and the machine may stall us).
    ?assert(InWindow >= Sent div 2).

two_users_talk_only_to_each_other_test() ->
    Config = config(#{groups => 5, clients_per_group => 2}),
    {ok, Run} = run(Config),
    check(Config, Run).

memory_guard_test() ->
    ?assertMatch({memory_exceeded, Bytes} when Bytes > 1,
                 run(config(#{duration => ms(2000), memory_limit_bytes => 1}))).

nothing_is_left_behind_test() ->
    Before = erlang:system_info(process_count),
    {ok, _} = run(config(#{groups => 20, clients_per_group => 5})),
    ?assertEqual(undefined, whereis(msgbench_chat_sup)),
    %% Exit signals are asynchronous: the tree's processes may take a moment to
    %% go on a loaded machine, but every one of them must go.
    ?assert(settles(fun() -> erlang:system_info(process_count) =< Before end, 100)).

settles(Holds, 0) ->
    Holds();
settles(Holds, Tries) ->
    Holds() orelse begin timer:sleep(50), settles(Holds, Tries - 1) end.

%% A group that crashes takes the tree down; the coordinator says so.
crash_is_reported_test() ->
    Self = self(),
    Killer = spawn(fun() -> Self ! {killed, kill_a_group()} end),
    %% The supervisors' reports would only clutter the test output.
    #{level := Level} = logger:get_primary_config(),
    ok = logger:set_primary_config(level, none),
    Result = try run(config(#{duration => ms(3000)}))
             after logger:set_primary_config(level, Level)
             end,
    receive {killed, Group} -> ?assert(is_pid(Group)) end,
    ?assertMatch({crashed, _}, Result),
    ?assertNot(is_process_alive(Killer)),
    ?assertEqual(undefined, whereis(msgbench_chat_sup)).

kill_a_group() ->
    case whereis(msgbench_chat_sup) of
        undefined ->
            timer:sleep(5),
            kill_a_group();
        Top ->
            timer:sleep(50),
            #{groups := Groups} = msgbench_chat_sup:children(Top),
            [{_, Group, _, _} | _] = supervisor:which_children(Groups),
            exit(Group, crash),
            Group
    end.

%%--------------------------------------------------------------------
%% The user process on its own: the history keeps the last `history`.
%%--------------------------------------------------------------------

history_is_a_bounded_queue_test() ->
    Client = self(),
    {ok, User} = msgbench_chat_user:start_link(self(), Client, 3),
    Messages = [{chat, 1, 2, N, <<"m">>} || N <- lists:seq(1, 5)],
    lists:foreach(fun(M) -> User ! M end, Messages),
    lists:foreach(fun(M) -> receive M -> ok end end, Messages),                 % forwarded, in order
    ?assertEqual(#{history => lists:sublist(Messages, 3, 3), held => 3, stored => 5, limit => 3},
                 sys:get_state(User)),
    User ! {post, 2, hd(Messages)},
    ?assertEqual({post, 2, hd(Messages)}, receive P -> P end),   % to the group (self)
    unlink(User),
    exit(User, kill).

%%--------------------------------------------------------------------
%% Histogram
%%--------------------------------------------------------------------

bucket_midpoints_are_within_one_percent_test() ->
    Values = lists:seq(0, 200) ++ [round(math:pow(1.01, N)) || N <- lists:seq(500, 4000, 7)],
    lists:foreach(
      fun(V) ->
              {Lower, Width} = msgbench_chat_histogram:bounds(msgbench_chat_histogram:bucket(V)),
              ?assert(Lower =< V andalso V < Lower + Width),
              Mid = Lower + (Width - 1) div 2,
              ?assert(abs(Mid - V) =< 0.01 * max(V, 1))
      end, Values).

buckets_are_ordered_test() ->
    Buckets = [msgbench_chat_histogram:bucket(V) || V <- lists:seq(0, 100000, 37)],
    ?assertEqual(Buckets, lists:sort(Buckets)).

quantiles_test() ->
    Self = self(),
    Merged = msgbench_chat_histogram:new_merged(),
    %% Two clients, 1..1000 and 1001..2000: p50 is 1000, p99 1980.
    Clients = [spawn(fun() ->
                             [msgbench_chat_histogram:record(V) || V <- lists:seq(From, From + 999)],
                             put(other_key, 1),
                             ok = msgbench_chat_histogram:merge(Merged),
                             Self ! {self(), merged}
                     end) || From <- [1, 1001]],
    [receive {C, merged} -> ok end || C <- Clients],
    ?assertEqual(2000, msgbench_chat_histogram:total(Merged)),
    P50 = msgbench_chat_histogram:quantile(Merged, 0.5, 2000),
    P99 = msgbench_chat_histogram:quantile(Merged, 0.99, 2000),
    ?assert(abs(P50 - 1000) =< 10),
    ?assert(abs(P99 - 1980) =< 20),
    ?assertEqual(2000, msgbench_chat_histogram:quantile(Merged, 1.0, 2000)),
    ?assertEqual(0, msgbench_chat_histogram:quantile(msgbench_chat_histogram:new_merged(), 0.5, 0)).
