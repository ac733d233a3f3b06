%% The chat workload (seed 003, Chut): G groups of CPG users message each
%% other for T seconds.
%%
%% Processes: a group (msgbench_chat_group) knows its users; a user
%% (msgbench_chat_user) keeps its last `history` messages; both run under
%% the run's supervision tree (msgbench_chat_sup). Each user has a client,
%% a plain process spawned here and linked to its user, that drives it and
%% listens for deliveries. A message goes
%%
%%   client -> its user -> the group -> the peer user (kept) -> the peer's client
%%
%% as {post, PeerIndex, Message} up to the group and as Message itself
%% down, where Message = {chat, GroupId, UserId, SentAt, Body}: the sender's
%% group and user, its send time (erlang:monotonic_time(nanosecond))
%% and the body. The client picks the peer uniformly among the other
%% members of its group.
%%
%% This module is the coordinator (the process that calls run/1) and the
%% clients. The coordinator builds the tree, releases the clients, wakes at
%% T to read the VM's memory, waits for every client's sent count, waits
%% for the deliveries still in flight, then collects the clients' counts
%% and histograms and the users' history counts, and shuts the tree down.
-module(msgbench_chat).

-export([run/1]).
%% Spawned with spawn/3.
-export([client/2]).

-export_type([config/0, measurement/0]).

%% The seed's sentence, with its em dash (U+2014): a literal, so that every
%% message shares it (the VM does not copy literals when it sends).
-define(TEXT, <<"I've been mad for fucking years—absolutely years"/utf8>>).

%% Times are in ns of erlang:monotonic_time(nanosecond) (msgbench_measure:now/0).
-type config() :: #{groups := pos_integer(),
                    clients_per_group := pos_integer(),
                    duration := pos_integer(),
                    think := non_neg_integer(),           % 0: stress
                    listener_delay := non_neg_integer(),
                    message := text | binary,
                    history := non_neg_integer(),
                    drain_timeout := non_neg_integer(),
                    memory_limit_bytes := pos_integer() | infinity,
                    %% the groups' mailboxes (msgbench_chat_group)
                    message_queue_data := off_heap | on_heap,
                    %% stress: yield after each send-and-take round
                    yield := boolean()}.

-type measurement() :: #{setup := non_neg_integer(),      % ns
                         send_window := non_neg_integer(),
                         drain := non_neg_integer(),
                         sent := non_neg_integer(),
                         received := non_neg_integer(),
                         received_in_window := non_neg_integer(),
                         cross_group := non_neg_integer(),
                         self_deliveries := non_neg_integer(),
                         users := non_neg_integer(),
                         stored := non_neg_integer(),
                         max_held := non_neg_integer(),
                         latency_max := non_neg_integer(),
                         %% [[bucket, count]], the harness's layout
                         latency := [[non_neg_integer()]],
                         latency_samples := non_neg_integer(),
                         processes := pos_integer(),
                         runtime_memory_bytes := pos_integer()}.

-record(client, {coordinator :: pid(),
                 group_id :: pos_integer(),
                 user_id :: pos_integer(),
                 index :: pos_integer(),              % in the group, 1..peers
                 peers :: pos_integer(),              % clients_per_group
                 think :: non_neg_integer(),
                 delay :: non_neg_integer(),
                 message :: text | binary,
                 yield :: boolean(),
                 counters :: counters:counters_ref(), % ?DRAINED, ?RELEASED, ?DRAIN_OVER
                 merged :: msgbench_histogram:merged(),
                 user :: pid() | undefined,
                 deadline = 0 :: integer()}).

%% The run's shared counters (one counters array, write_concurrency): the
%% deliveries clients took after they stopped sending, the clients that
%% took their go message, and 1 once the drain is over.
-define(DRAINED, 1).
-define(RELEASED, 2).
-define(DRAIN_OVER, 3).

%% How often the coordinator looks at erlang:memory(total) while the
%% clients send: Erlang mailboxes are unbounded, and a stress run whose
%% groups fall behind grows their queues without limit.
-define(MEMORY_CHECK_MS, 100).
%% How far ahead of the release the start is (ns): enough for
%% every client to take its go message first (a few microseconds each; see
%% measure/3).
-define(RELEASE_MARGIN_FIXED, 20000000).
-define(RELEASE_MARGIN_PER_CLIENT, 10000).
-define(NS_PER_MS, 1000000).
%% How often the coordinator adds up the deliveries during the drain.
-define(DRAIN_POLL_MS, 1).
%% How long the users get to answer the final report.
-define(REPORT_TIMEOUT_MS, 60000).
%% Supervisors in the tree (msgbench_chat_sup): the top, groups', users'.
-define(SUPERVISORS, 3).

-spec run(config()) -> {ok, measurement()}
                           | {memory_exceeded, pos_integer()}
                           | {crashed, term()}.
run(Config) ->
    %% The coordinator is linked to the top supervisor; trapping exits, it
    %% hears of a crash (the tree going down) in any of its waits.
    process_flag(trap_exit, true),
    %% Every client reports to it twice (its sent count, then its final
    %% counts), every user once: up to 100,000s of messages queued at once.
    %% Off the heap, a garbage collection does not copy them each time
    %% (on the heap, those copies stalled a scheduler for up to a second).
    process_flag(message_queue_data, off_heap),
    SetupStart = msgbench_measure:now(),
    {ok, Top} = msgbench_chat_sup:start_link(),
    try
        {ok, measure(Top, SetupStart, Config)}
    catch
        throw:{crashed, _} = Crashed -> Crashed;
        throw:{memory_exceeded, _} = Exceeded -> Exceeded
    after
        shut_down(Top)
    end.

measure(Top, SetupStart, #{groups := G, clients_per_group := CPG, duration := Duration,
                           drain_timeout := DrainTimeout, history := History} = Config) ->
    #{groups := GroupSup, users := UserSup} = msgbench_chat_sup:children(Top),
    Counters = counters:new(3, [write_concurrency]),
    Merged = msgbench_histogram:new_merged(),
    Template = #client{coordinator = self(), group_id = 1, user_id = 1, index = 1, peers = CPG,
                       think = maps:get(think, Config),
                       delay = maps:get(listener_delay, Config),
                       message = maps:get(message, Config),
                       yield = maps:get(yield, Config),
                       counters = Counters, merged = Merged},
    {Clients, Users} = build(1, G, {GroupSup, maps:get(message_queue_data, Config)}, UserSup,
                             History, Template, [], []),
    SetupEnd = msgbench_measure:now(),

    %% The release. High priority: the coordinator sleeps nearly all the
    %% time, and must wake on time at T (and for the memory checks) while
    %% the clients keep every scheduler busy.
    %%
    %% Every client gets the start time and T, and waits for the start
    %% (stress), or its first send (realistic), on its own timer. The start
    %% is set far enough ahead for every client to have taken its go
    %% message first: waking 100,000 processes takes a few hundred ms, and
    %% within the window that herd would delay the first deliveries by as
    %% much (the p99 latency of a realistic 100k run, above 0.5 s).
    process_flag(priority, high),
    N = G * CPG,
    Release = msgbench_measure:now(),
    Start = Release + ?RELEASE_MARGIN_FIXED + N * ?RELEASE_MARGIN_PER_CLIENT,
    Deadline = Start + Duration,
    lists:foreach(fun(Client) -> Client ! {go, Start, Deadline} end, Clients),
    Released = msgbench_measure:now(),
    MemoryLimit = maps:get(memory_limit_bytes, Config),
    wait_until(Start, Top, MemoryLimit),
    case counters:get(Counters, ?RELEASED) of
        N -> ok;
        Ready -> log("only ~w of ~w clients had taken their go message at the start", [Ready, N])
    end,
    wait_until(Deadline, Top, MemoryLimit),
    RuntimeMemory = erlang:memory(total),

    {Sent, ReceivedAtStop, LastStop} = collect_stopped(N, Top, 0, 0, Start),
    Stopped = msgbench_measure:now(),
    await_drain(Top, Sent, ReceivedAtStop, Counters, max(LastStop, Deadline) + DrainTimeout),
    DrainEnd = msgbench_measure:now(),
    ok = msgbench_sampler:last(),  % the series ends here, before the tree goes down
    counters:put(Counters, ?DRAIN_OVER, 1),
    lists:foreach(fun(Client) -> Client ! {finish, self()} end, Clients),
    Final = collect_final(N, Top, #{received => 0, received_in_window => 0, cross_group => 0,
                                    self_deliveries => 0, latency_max => 0, last => Start}),
    #{last := Last} = Final,
    Finished = msgbench_measure:now(),
    Reports = report(Users, Top),
    log("setup ~.1f ms, release (sending go) ~.1f ms, all stopped T+~.1f ms, drain ~.1f ms, "
        "finish ~.1f ms, reports ~.1f ms",
        [ms(SetupStart, SetupEnd), ms(Release, Released), ms(Deadline, Stopped),
         ms(Stopped, DrainEnd), ms(DrainEnd, Finished), ms(Finished, msgbench_measure:now())]),
    Latency = msgbench_histogram:pairs(Merged),
    maps:merge(maps:without([last], Final),
               Reports#{setup => SetupEnd - SetupStart,
                        send_window => LastStop - Start,
                        drain => max(0, Last - Deadline),
                        sent => Sent,
                        latency => Latency,
                        latency_samples => lists:sum([Count || [_, Count] <- Latency]),
                        processes => G * (2 * CPG + 1) + ?SUPERVISORS,
                        runtime_memory_bytes => RuntimeMemory}).

%% Group by group: the group, then each user with its client (spawned
%% first, as the user forwards to it), then the group learns its members.
build(GroupId, G, _Groups, _UserSup, _History, _Template, Clients, Users) when GroupId > G ->
    {Clients, Users};
build(GroupId, G, {GroupSup, QueueData} = Groups, UserSup, History,
      #client{peers = CPG} = Template, Clients, Users) ->
    Group = msgbench_chat_sup:start_group(GroupSup, QueueData),
    Members = [begin
                   Client = spawn(?MODULE, client,
                                  [Template#client{group_id = GroupId,
                                                   user_id = (GroupId - 1) * CPG + Index,
                                                   index = Index},
                                   seed()]),
                   User = msgbench_chat_sup:start_user(UserSup, Group, Client, History),
                   Client ! {user, User},
                   {Client, User}
               end || Index <- lists:seq(1, CPG)],
    GroupUsers = [User || {_, User} <- Members],
    ok = msgbench_chat_group:set_members(Group, GroupUsers),
    build(GroupId + 1, G, Groups, UserSup, History, Template,
          [Client || {Client, _} <- Members] ++ Clients, GroupUsers ++ Users).

%% A client's generator state (rand:mwc59, in [1, 2^58]), drawn here from
%% rand's default generator. The client does not seed itself: seeding, like
%% any arithmetic on big integers, leaves a heap fragment of about 4 KB in
%% a process that may never collect garbage (a realistic client), which is
%% 400 MB at 100,000 users.
seed() ->
    rand:uniform(1 bsl 58).

wait_until(Deadline, Top, MemoryLimit) ->
    case (Deadline - msgbench_measure:now()) div ?NS_PER_MS of
        Remaining when Remaining =< 0 ->
            ok;
        Remaining ->
            receive
                {'EXIT', Top, Reason} -> throw({crashed, Reason})
            after min(Remaining, ?MEMORY_CHECK_MS) ->
                    case MemoryLimit =/= infinity andalso erlang:memory(total) of
                        Used when is_integer(Used), Used > MemoryLimit ->
                            throw({memory_exceeded, Used});
                        _ ->
                            wait_until(Deadline, Top, MemoryLimit)
                    end
            end
    end.

%% Every client's sent count, and what it had received, when it stopped.
collect_stopped(0, _Top, Sent, Received, LastStop) ->
    {Sent, Received, LastStop};
collect_stopped(Pending, Top, Sent, Received, LastStop) ->
    receive
        {stopped, At, ClientSent, ClientReceived} ->
            collect_stopped(Pending - 1, Top, Sent + ClientSent, Received + ClientReceived,
                            max(LastStop, At));
        {'EXIT', Top, Reason} ->
            throw({crashed, Reason})
    end.

%% Until every message sent was received or the drain timed out.
await_drain(Top, Sent, ReceivedAtStop, Counters, Until) ->
    case ReceivedAtStop + counters:get(Counters, ?DRAINED) >= Sent
        orelse msgbench_measure:now() >= Until of
        true ->
            ok;
        false ->
            receive
                {'EXIT', Top, Reason} -> throw({crashed, Reason})
            after ?DRAIN_POLL_MS ->
                    await_drain(Top, Sent, ReceivedAtStop, Counters, Until)
            end
    end.

collect_final(0, _Top, Acc) ->
    Acc;
collect_final(Pending, Top, Acc) ->
    receive
        {final, Received, InWindow, CrossGroup, SelfDeliveries, Max, Last} ->
            #{received := R, received_in_window := W, cross_group := C, self_deliveries := S,
              latency_max := M, last := L} = Acc,
            collect_final(Pending - 1, Top,
                          Acc#{received := R + Received, received_in_window := W + InWindow,
                               cross_group := C + CrossGroup,
                               self_deliveries := S + SelfDeliveries,
                               latency_max := max(M, Max), last := max(L, Last)});
        {'EXIT', Top, Reason} ->
            throw({crashed, Reason})
    end.

%% Every user answers with what it stored and what its history holds; the
%% users that answer are the users that took part.
report(Users, Top) ->
    Ref = make_ref(),
    lists:foreach(fun(User) -> User ! {report, self(), Ref} end, Users),
    Until = msgbench_measure:now() + ?REPORT_TIMEOUT_MS * ?NS_PER_MS,
    collect_reports(length(Users), Ref, Top, Until, #{users => 0, stored => 0, max_held => 0}).

collect_reports(0, _Ref, _Top, _Until, Acc) ->
    Acc;
collect_reports(Pending, Ref, Top, Until, #{users := N, stored := S, max_held := H} = Acc) ->
    Timeout = max(0, (Until - msgbench_measure:now()) div ?NS_PER_MS),
    receive
        {Ref, Stored, Held} ->
            collect_reports(Pending - 1, Ref, Top, Until,
                            Acc#{users := N + 1, stored := S + Stored, max_held := max(H, Held)});
        {'EXIT', Top, Reason} ->
            throw({crashed, Reason})
    after Timeout ->
            Acc
    end.

%% The tree goes down whatever happened (it may be down already: a crash).
%% A client still alive (one that never got to finish) dies with its user.
shut_down(Top) ->
    Begin = msgbench_measure:now(),
    Monitor = monitor(process, Top),
    exit(Top, shutdown),
    receive {'DOWN', Monitor, process, Top, _} -> ok end,
    receive {'EXIT', Top, _} -> ok after 0 -> ok end,
    process_flag(priority, normal),
    log("shutdown ~.1f ms", [ms(Begin, msgbench_measure:now())]).

ms(From, To) ->
    (To - From) / ?NS_PER_MS.

log(Format, Args) ->
    io:format(standard_error, "msgbench_chat: " ++ Format ++ "~n", Args).

%%--------------------------------------------------------------------
%% Client
%%--------------------------------------------------------------------

%% Loop arguments, which cost nothing to update (no record is rebuilt per
%% message): Rng (rand:mwc59 state, one small integer), Sent, Received,
%% InWindow (received before T), Max (largest latency), Last (the time of
%% the last delivery). Rare counts (deliveries from another group or from
%% itself) and the latency histogram are in the process dictionary.
-spec client(#client{}, pos_integer()) -> ok.
client(#client{counters = Counters} = Template, Rng) ->
    User = receive {user, U} -> U end,
    %% A client that crashes takes its user, and so the run, down.
    link(User),
    receive
        {go, Start, Deadline} ->
            counters:add(Counters, ?RELEASED, 1),
            C = Template#client{user = User, deadline = Deadline},
            case C#client.think of
                0 ->
                    %% Nothing can arrive before the start: nobody sends.
                    receive after timeout_ms(Start) -> ok end,
                    stress(C, Rng, 0, 0, 0, 0, Start);
                Think ->
                    %% The first send at a uniform phase in [0, think), in
                    %% whole microseconds: 27 random bits times think in
                    %% microseconds stays below 2^59, a small integer, for
                    %% any think up to the spec's hour (no bignum: see seed/0).
                    Rng1 = rand:mwc59(Rng),
                    ThinkUs = Think div 1000,
                    PhaseUs = ((rand:mwc59_value32(Rng1) bsr 5) * ThinkUs) bsr 27,
                    Due = Start + PhaseUs * 1000,
                    schedule(Due, C, Rng1, 0, 0, 0, 0, Start)
            end
    end.

%% Stress: send, then listen for listener_delay (0: take what is already
%% there), until T.
stress(#client{deadline = Deadline, delay = Delay} = C, Rng, Sent, Received, InWindow, Max, Last) ->
    Now = msgbench_measure:now(),
    case Now < Deadline of
        false ->
            stop(C, Now, Sent, Received, InWindow, Max, Last);
        true ->
            Rng1 = send(C, Rng, Now),
            case Delay of
                0 -> take(C, Rng1, Sent + 1, Received, InWindow, Max, Last);
                _ -> listen(min(Now + Delay, Deadline), stress, C, Rng1, Sent + 1, Received,
                            InWindow, Max, Last)
            end
    end.

%% Takes the deliveries already in the mailbox, then sends again (the
%% yield variant first lets every other runnable process have its turn).
take(#client{deadline = Deadline} = C, Rng, Sent, Received, InWindow, Max, Last) ->
    receive
        {chat, GroupId, UserId, SentAt, _Body} ->
            Now = msgbench_measure:now(),
            Latency = delivered(C, GroupId, UserId, Now - SentAt),
            case Now < Deadline of
                true -> take(C, Rng, Sent, Received + 1, InWindow + 1, max(Max, Latency), Now);
                false -> stop(C, Now, Sent, Received + 1, InWindow, max(Max, Latency), Now)
            end
    after 0 ->
            _ = C#client.yield andalso erlang:yield(),
            stress(C, Rng, Sent, Received, InWindow, Max, Last)
    end.

%% Realistic: the next send is due at Due, then one every think while
%% the due time is before T. A client with no send left before T reports
%% its count at once instead of waking at T: 100,000 clients waking at the
%% same instant would be a thundering herd (a few microseconds each) that
%% delays the deliveries still in flight and stretches the measured window.
schedule(Due, #client{deadline = Deadline} = C, Rng, Sent, Received, InWindow, Max, Last) ->
    case Due < Deadline of
        true -> listen(Due, realistic, C, Rng, Sent, Received, InWindow, Max, Last);
        false -> stop(C, msgbench_measure:now(), Sent, Received, InWindow, Max, Last)
    end.

realistic(Due, #client{think = Think} = C, Rng, Sent, Received, InWindow, Max, Last) ->
    Rng1 = send(C, Rng, msgbench_measure:now()),
    schedule(Due + Think, C, Rng1, Sent + 1, Received, InWindow, Max, Last).

%% Takes deliveries until Until, then goes on with Next. The wait is a
%% receive ... after: the VM keeps one timer per waiting process and
%% cancels it when a delivery comes first.
listen(Until, Next, #client{deadline = Deadline} = C, Rng, Sent, Received, InWindow, Max, Last) ->
    receive
        {chat, GroupId, UserId, SentAt, _Body} ->
            Now = msgbench_measure:now(),
            Latency = delivered(C, GroupId, UserId, Now - SentAt),
            InWindow1 = case Now < Deadline of
                            true -> InWindow + 1;
                            false -> InWindow
                        end,
            case Now < Until of
                true -> listen(Until, Next, C, Rng, Sent, Received + 1, InWindow1,
                               max(Max, Latency), Now);
                false -> next(Next, Until, C, Rng, Sent, Received + 1, InWindow1,
                              max(Max, Latency), Now)
            end
    after timeout_ms(Until) ->
            next(Next, Until, C, Rng, Sent, Received, InWindow, Max, Last)
    end.

next(stress, _Until, C, Rng, Sent, Received, InWindow, Max, Last) ->
    stress(C, Rng, Sent, Received, InWindow, Max, Last);
next(realistic, Due, C, Rng, Sent, Received, InWindow, Max, Last) ->
    realistic(Due, C, Rng, Sent, Received, InWindow, Max, Last).

%% Whole milliseconds until Until, rounded up: never wakes early.
timeout_ms(Until) ->
    case Until - msgbench_measure:now() of
        Left when Left =< 0 -> 0;
        Left -> (Left + ?NS_PER_MS - 1) div ?NS_PER_MS
    end.

%% Picks the peer uniformly among the others (multiply-shift on 32 random
%% bits, then skip itself) and sends through the user.
send(#client{user = User, group_id = GroupId, user_id = UserId, index = Index, peers = Peers,
             message = Kind}, Rng, Now) ->
    Rng1 = rand:mwc59(Rng),
    Pick = ((rand:mwc59_value32(Rng1) * (Peers - 1)) bsr 32) + 1,
    Peer = case Pick >= Index of
               true -> Pick + 1;
               false -> Pick
           end,
    User ! {post, Peer, {chat, GroupId, UserId, Now, body(Kind)}},
    Rng1.

%% text: the one shared literal. binary: the seed's
%% term_to_binary({Text, os:timestamp()}), a fresh binary per message
%% (erlang:timestamp/0 is the same triple without a system call).
body(text) -> ?TEXT;
body(binary) -> term_to_binary({?TEXT, erlang:timestamp()}).

%% Checks where a delivery came from and records its latency; returns it.
delivered(#client{group_id = GroupId, user_id = UserId}, GroupId, UserId, Latency) ->
    count(self_deliveries),
    record(Latency);
delivered(#client{group_id = GroupId}, GroupId, _UserId, Latency) ->
    record(Latency);
delivered(_C, _GroupId, _UserId, Latency) ->
    count(cross_group),
    record(Latency).

record(Latency) ->
    ok = msgbench_histogram:record(Latency),
    max(Latency, 0).

count(Key) ->
    put(Key, counted(Key) + 1).

counted(Key) ->
    case get(Key) of
        undefined -> 0;
        N -> N
    end.

%% Done sending (at T; realistic: after the last send due before T):
%% report the sent count, then keep taking deliveries (counting them in the
%% shared drain counter too) until the coordinator asks for the rest.
stop(#client{coordinator = Coordinator} = C, Now, Sent, Received, InWindow, Max, Last) ->
    Coordinator ! {stopped, Now, Sent, Received},
    drain(C, Received, InWindow, Max, Last).

drain(#client{counters = Counters, deadline = Deadline} = C, Received, InWindow, Max, Last) ->
    receive
        {chat, GroupId, UserId, SentAt, _Body} ->
            case counters:get(Counters, ?DRAIN_OVER) of
                0 ->
                    Now = msgbench_measure:now(),
                    Latency = delivered(C, GroupId, UserId, Now - SentAt),
                    counters:add(Counters, ?DRAINED, 1),
                    InWindow1 = case Now < Deadline of
                                    true -> InWindow + 1;
                                    false -> InWindow
                                end,
                    drain(C, Received + 1, InWindow1, max(Max, Latency), Now);
                _ ->
                    %% The drain timed out: what comes now is not counted.
                    receive {finish, From} -> finish(From, C, Received, InWindow, Max, Last) end
            end;
        {finish, From} ->
            finish(From, C, Received, InWindow, Max, Last)
    end.

finish(From, #client{merged = Merged}, Received, InWindow, Max, Last) ->
    ok = msgbench_histogram:merge(Merged),
    From ! {final, Received, InWindow, counted(cross_group), counted(self_deliveries), Max, Last},
    ok.
