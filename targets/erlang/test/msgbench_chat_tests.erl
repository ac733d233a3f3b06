-module(msgbench_chat_tests).

-include_lib("eunit/include/eunit.hrl").

%% Times in the run's config are ns.
ms(Ms) -> Ms * 1000000.

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

%% A stress run that sent something. A client that first runs after T sends
%% nothing, as it must; on a busy machine the VM's timers wake its clients late
%% (with one CPU hog beside it on 2 cores, a 20 ms `receive after` returned
%% about 120 ms late), past a 100 ms window. Such a run says nothing of the
%% rules, so it runs again with twice the window, at most three more times.
run_sending(Config) -> run_sending(Config, 3).

run_sending(Config, Retries) ->
    rerun_while(Config, Retries, fun(#{sent := Sent}) -> Sent =:= 0 end,
                fun(#{duration := Duration} = C) -> C#{duration := 2 * Duration} end).

%% A realistic run in which something arrived before T. The VM's timers,
%% late on a busy machine (above), can push every delivery past T; such a run
%% says nothing of the in-window count, so it runs again, at most Retries
%% more times (the same window: the think schedule fixes the sends).
run_delivering_in_window(Config, Retries) ->
    rerun_while(Config, Retries, fun(#{received_in_window := InWindow}) -> InWindow =:= 0 end,
                fun(C) -> C end).

%% Runs Config; while the run says nothing (Empty) and Retries are left, runs
%% Next(Config) again.
rerun_while(Config, Retries, Empty, Next) ->
    case run(Config) of
        {ok, Run} = Result ->
            case Retries > 0 andalso Empty(Run) of
                true -> rerun_while(Next(Config), Retries - 1, Empty, Next);
                false -> Result
            end;
        Result -> Result
    end.

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
    {ok, Run} = run_sending(Config),
    Run = check(Config, Run),
    #{send_window := Window, latency := Latency, latency_max := Max,
      processes := Processes, max_held := MaxHeld} = Run,
    ?assert(Window >= ms(100)),
    ?assert(Max > 0),
    ?assertEqual(msgbench_histogram:bucket(Max), hd(lists:last(Latency))),
    ?assertEqual(2 * (2 * 3 + 1) + 3, Processes),
    %% Thousands of deliveries each (unless the machine stalled us for the
    %% whole run): histories fill up, and no more.
    #{sent := Sent} = Run,
    ?assert(MaxHeld =:= 10 orelse Sent < 100).

stress_with_listener_delay_test() ->
    Config = config(#{listener_delay => ms(1), groups => 3, clients_per_group => 2}),
    {ok, Run} = run_sending(Config),
    check(Config, Run).

binary_message_test() ->
    Config = config(#{message => binary, history => 3}),
    {ok, Run} = run_sending(Config),
    ?assertMatch(#{max_held := 3}, check(Config, Run)).

no_history_test() ->
    Config = config(#{history => 0}),
    {ok, Run} = run_sending(Config),
    ?assertMatch(#{max_held := 0}, check(Config, Run)).

%% Think 50 ms over 200 ms: the first send at a phase in [0, 50), then one
%% every 50 ms while before T: exactly 4 per client, whatever the phase.
realistic_test() ->
    Config = config(#{think => ms(50), duration => ms(200), groups => 3, clients_per_group => 4}),
    {ok, Run} = run_delivering_in_window(Config, 3),
    Run = check(Config, Run),
    #{sent := Sent, received_in_window := InWindow} = Run,
    ?assertEqual(4 * 12, Sent),
    %% Light load: something arrives before T, never more than was sent. How
    %% much is the machine's business (a send due just before T is delivered
    %% after it, and a loaded CI machine stalls the VM for tens of ms).
    ?assert(InWindow > 0 andalso InWindow =< Sent).

two_users_talk_only_to_each_other_test() ->
    Config = config(#{groups => 5, clients_per_group => 2}),
    {ok, Run} = run_sending(Config),
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
%% Histogram: the harness's layout (msgbench/histogram.py)
%%--------------------------------------------------------------------

%% The vectors of tests/test_histogram.py, which every language's bucket
%% function is tested against.
bucket_vectors_test_() ->
    [?_assertEqual({V, Bucket}, {V, msgbench_histogram:bucket(V)})
     || {V, Bucket} <- [{0, 0}, {1, 1}, {127, 127}, {128, 128}, {129, 128}, {255, 191},
                        {256, 192}, {1000, 317}, {65535, 703}, {1000000, 954},
                        {1000000000, 1591}, {1 bsl 40, 2240}, {1 bsl 62, 3648}]].

negative_values_count_as_zero_test() ->
    ?assertEqual(0, msgbench_histogram:bucket(-5)).

%% 2^63 - 1 is the harness's largest bucket; nothing goes past it.
largest_bucket_test() ->
    ?assertEqual(3711, msgbench_histogram:bucket((1 bsl 63) - 1)),
    ?assertEqual(3711, msgbench_histogram:bucket(1 bsl 70)).

%% Each bucket is [lower, lower + width): width 1 below 128, then at most
%% 1/64 of its lower bound (bounds as msgbench/histogram.py computes them).
every_value_lies_in_its_bucket_test() ->
    Values = lists:seq(0, 5000, 7) ++ [123456789, (1 bsl 40) + 12345, (1 bsl 63) - 1],
    lists:foreach(
      fun(V) ->
              Bucket = msgbench_histogram:bucket(V),
              {Lower, Width} = bounds(Bucket),
              ?assert(Lower =< V andalso V < Lower + Width),
              ?assert(Width =:= 1 orelse Width * 64 =< Lower)
      end, Values).

bounds(Bucket) when Bucket < 128 -> {Bucket, 1};
bounds(Bucket) ->
    Shift = Bucket div 64 - 1,
    {(Bucket - Shift * 64) bsl Shift, 1 bsl Shift}.

buckets_are_ordered_test() ->
    Buckets = [msgbench_histogram:bucket(V) || V <- lists:seq(0, 100000, 37)],
    ?assertEqual(Buckets, lists:sort(Buckets)).

%% Two clients record into their own histograms and merge into one; the
%% result is sparse [bucket, count] pairs in bucket order.
merged_pairs_test() ->
    Self = self(),
    Merged = msgbench_histogram:new_merged(),
    Clients = [spawn(fun() ->
                             [msgbench_histogram:record(V) || V <- Values],
                             put(other_key, 1),
                             ok = msgbench_histogram:merge(Merged),
                             Self ! {self(), merged}
                     end) || Values <- [[5, 5, 1000, -3], [1001, 5, 1 bsl 40]]],
    [receive {C, merged} -> ok end || C <- Clients],
    ?assertEqual([[0, 1], [5, 3], [317, 2], [2240, 1]], msgbench_histogram:pairs(Merged)),
    ?assertEqual([], msgbench_histogram:pairs(msgbench_histogram:new_merged())).
