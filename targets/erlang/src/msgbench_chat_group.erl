%% A chat group (seed 003, Chut): a process under the groups' supervisor
%% (msgbench_chat_sup) that knows its members, the user processes, by their
%% index in the group, and routes each message to the member it names.
%%
%% A special process like msgbench_chat_user, for the same reason: every
%% message of the run passes through a group, which does nothing but look
%% up one pid and send.
-module(msgbench_chat_group).

-export([start_link/1, set_members/2]).
%% proc_lib and sys.
-export([init/1, system_continue/3, system_terminate/4, system_code_change/4,
         system_get_state/1]).

%% QueueData: where the group's mailbox lives. Every message of the run
%% passes through a group, whose queue is the one that backs up in stress
%% runs; with off_heap (OTP's advice for a process that receives many
%% messages) a garbage collection of the group does not copy that queue,
%% and senders do not need the group's main lock to enqueue.
-spec start_link(off_heap | on_heap) -> {ok, pid()}.
start_link(QueueData) ->
    proc_lib:start_link(?MODULE, init, [self()], infinity, [{message_queue_data, QueueData}]).

%% The group's users, in index order (a user's index is its place here).
-spec set_members(pid(), [pid()]) -> ok.
set_members(Group, Users) ->
    Group ! {members, list_to_tuple(Users)},
    ok.

-spec init(pid()) -> no_return().
init(Parent) ->
    proc_lib:init_ack(Parent, {ok, self()}),
    receive
        {members, Members} -> loop(Parent, Members)
    end.

loop(Parent, Members) ->
    receive
        {post, Peer, Message} ->
            element(Peer, Members) ! Message,
            loop(Parent, Members);
        {system, From, Request} ->
            sys:handle_system_msg(Request, From, Parent, ?MODULE, [], Members)
    end.

-spec system_continue(pid(), [sys:dbg_opt()], tuple()) -> no_return().
system_continue(Parent, _Debug, Members) ->
    loop(Parent, Members).

-spec system_terminate(term(), pid(), [sys:dbg_opt()], tuple()) -> no_return().
system_terminate(Reason, _Parent, _Debug, _Members) ->
    exit(Reason).

-spec system_code_change(tuple(), module(), term(), term()) -> {ok, tuple()}.
system_code_change(Members, _Module, _OldVsn, _Extra) ->
    {ok, Members}.

-spec system_get_state(tuple()) -> {ok, [pid()]}.
system_get_state(Members) ->
    {ok, tuple_to_list(Members)}.
