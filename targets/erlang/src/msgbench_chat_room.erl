%% A group of the chat server (docs/chat-server.md): a process that knows its
%% joined users (the connection processes) and passes each message to one of
%% the sender's peers, picked uniformly at random among the group's other
%% members, as Chut's groups do. It monitors its users, so a user whose
%% connection ends leaves the group however it ended.
%%
%% Spawned with message_queue_data=off_heap, as the in-process chat's groups
%% (msgbench_chat_group): every message of its users passes through its
%% mailbox, the queue that backs up when senders outrun it, and off_heap
%% keeps that queue out of its garbage collections.
-module(msgbench_chat_room).

-export([start/0, join/2, post/3]).

-record(room, {index = #{} :: #{pid() => pos_integer()},   % member -> its place
               members = #{} :: #{pos_integer() => pid()},  % place -> member, 1..size
               size = 0 :: non_neg_integer()}).

-spec start() -> pid().
start() ->
    spawn_opt(fun() -> loop(#room{}) end, [{message_queue_data, off_heap}]).

%% Joins the calling process; returns once the group knows it, so that the
%% user can tell its client it has joined (the load generator starts the
%% clock only after every join).
-spec join(pid(), timeout()) -> ok | {error, timeout}.
join(Room, Timeout) ->
    Ref = make_ref(),
    Room ! {join, self(), Ref},
    receive
        {Ref, joined} -> ok
    after Timeout ->
        {error, timeout}
    end.

%% A message of the calling user, to one of its peers (the payload and its
%% opcode unchanged).
-spec post(pid(), msgbench_ws:opcode(), binary()) -> ok.
post(Room, Opcode, Payload) ->
    Room ! {post, self(), Opcode, Payload},
    ok.

loop(Room) ->
    receive
        {post, From, Opcode, Payload} ->
            ok = deliver(peer(From, Room), Opcode, Payload),
            loop(Room);
        {join, User, Ref} ->
            _ = erlang:monitor(process, User),
            User ! {Ref, joined},
            loop(add(User, Room));
        {'DOWN', _Monitor, process, User, _Reason} ->
            loop(remove(User, Room))
    end.

deliver(none, _Opcode, _Payload) -> ok;
deliver(Peer, Opcode, Payload) ->
    Peer ! {deliver, Opcode, Payload},
    ok.

%% One of the group's members other than From, uniformly: a place among the
%% size - 1 others, skipping From's own. A group with no other member drops
%% the message (docs/chat-server.md); a sender that is not a member (it left
%% while its message was on the way) may reach any member.
peer(From, #room{index = Index, members = Members, size = Size}) ->
    case maps:find(From, Index) of
        {ok, _Own} when Size < 2 -> none;
        {ok, Own} ->
            Pick = rand:uniform(Size - 1),
            maps:get(if Pick >= Own -> Pick + 1; true -> Pick end, Members);
        error when Size =:= 0 -> none;
        error -> maps:get(rand:uniform(Size), Members)
    end.

add(User, #room{index = Index, members = Members, size = Size} = Room) ->
    Place = Size + 1,
    Room#room{index = Index#{User => Place}, members = Members#{Place => User}, size = Place}.

%% The last member takes the leaver's place, so places stay 1..size.
remove(User, #room{index = Index, members = Members, size = Size} = Room) ->
    case maps:take(User, Index) of
        error ->
            Room;
        {Place, Index1} when Place =:= Size ->
            Room#room{index = Index1, members = maps:remove(Size, Members), size = Size - 1};
        {Place, Index1} ->
            Last = maps:get(Size, Members),
            Room#room{index = Index1#{Last => Place}, members = maps:remove(Size, Members#{Place => Last}),
                      size = Size - 1}
    end.
